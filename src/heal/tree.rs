//! The private copy of the workspace heal works in, and the way its change reaches the user's
//! tree. The copy is made once per run (`std::fs::copy`, which the kernel turns into a reflink
//! where the filesystem shares blocks, each file keeping its time), without `.git` and without
//! the project's own bytecode (`__pycache__` outside a virtualenv: a run in the workspace could
//! have left it for other code); candidates are written and tested there only. Build outputs (`node_modules`, cargo's `target`) are not copied: the tests see the
//! workspace's own, read-only, through an overlay whose writes are gone when the run ends. What heal wrote is held in memory, so code the tests ran cannot change the diff. The
//! user's tree is written at the end, only the files heal changed, and only when each is still
//! as heal found it: a file someone else changed meanwhile means nothing is applied.

use std::collections::BTreeMap;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::Failure;
use crate::testrun::warm::Warm;
use crate::workspace::jail::{self, Roots};
use crate::workspace::runs_outside::RunsOutside;
use crate::workspace::write::write_atomically;

/// The largest file heal reads or writes.
const MAX_FILE: u64 = 16 << 20;

/// What heal changed: each file's content, None for a file that does not exist.
pub(crate) type Contents = BTreeMap<String, Option<String>>;

/// The start of every copy's name in the temporary directory.
const COPY_PREFIX: &str = "autocoder-heal-";

/// Build outputs layered at most (an overlay mount each per test run); the others are copied.
const MAX_LAYERS: usize = 16;

/// Where a copy's build outputs come from: found while copying the workspace (none when they
/// are to be copied), or those another copy found.
enum Outputs<'a> {
    Find(Option<Vec<PathBuf>>),
    Known(&'a [PathBuf]),
}

/// The copy, removed when dropped.
pub(crate) struct Tree {
    dir: PathBuf,
    /// Held while the copy is in use: a copy no run holds was left by one that was killed.
    _lock: nix::fcntl::Flock<std::fs::File>,
    work: PathBuf,
    roots: Roots,
    /// Each changed file as it was before heal's first write.
    originals: Contents,
    /// Each changed file as heal last wrote it.
    current: Contents,
    /// The workspace's build outputs the tests see through an overlay, relative to its root.
    layers: Vec<PathBuf>,
    /// The workspace the copy was made of.
    workspace: PathBuf,
    /// Its files that run outside the sandbox: never written.
    runs_outside: RunsOutside,
    /// The worker its tests run warm in, once a search started one.
    warm: Option<Warm>,
}

impl Tree {
    /// A private copy of `workspace` (a directory of mode 700 in the temporary directory);
    /// `layered`: its build outputs shown through overlays (only runs of `baseline::run` mount
    /// them), else copied.
    pub(crate) fn copy_of(workspace: &Path, layered: bool) -> Result<Tree, Failure> {
        let temp = std::env::temp_dir();
        // A copy inside what it copies would copy itself until the names grow too long.
        if temp
            .canonicalize()
            .unwrap_or_else(|_| temp.clone())
            .starts_with(workspace)
        {
            return Err(Failure::usage(format!(
                "the temporary directory {} is inside the workspace, where heal cannot copy it",
                temp.display()
            ))
            .with_hint("set TMPDIR to a directory outside the project"));
        }
        remove_abandoned_copies(&temp);
        let layers = (layered && can_layer(workspace)).then(Vec::new);
        Tree::copied(workspace, workspace, Outputs::Find(layers))
    }

    /// Another copy of this one, in the same state: one more place to test a change in.
    pub(crate) fn another(&self) -> Result<Tree, Failure> {
        let mut tree = Tree::copied(&self.work, &self.workspace, Outputs::Known(&self.layers))?;
        tree.originals = self.originals.clone();
        tree.current = self.current.clone();
        Ok(tree)
    }

    /// The worker its tests run warm in, if any.
    pub(crate) fn warm(&self) -> Option<&Warm> {
        self.warm.as_ref()
    }

    /// Gives it a warm worker, or (None) stops the one it has.
    pub(crate) fn set_warm(&mut self, warm: Option<Warm>) {
        self.warm = warm;
    }

    /// The build outputs the tests see, for the sandbox: the workspace's own, read-only, what a
    /// run writes there gone when it ends.
    pub(crate) fn layered(&self) -> Vec<crate::sandbox::policy::Layered> {
        self.layers
            .iter()
            .map(|at| crate::sandbox::policy::Layered {
                at: at.clone(),
                lower: self.workspace.join(at),
            })
            .collect()
    }

    /// A private copy of `from` (the workspace or a copy of it) in the temporary directory.
    fn copied(from: &Path, workspace: &Path, outputs: Outputs) -> Result<Tree, Failure> {
        let temp = std::env::temp_dir();
        static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let name = format!(
            "{COPY_PREFIX}{}-{}-{}",
            std::process::id(),
            MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        );
        let dir = temp.join(&name);
        // Made under another name, and named a copy once it is locked: no run can take it for
        // an abandoned one in between.
        let making = temp.join(format!(".{name}"));
        let cannot = |err: std::io::Error| {
            Failure::external(format!(
                "cannot make heal's copy in {}: {err}",
                temp.display()
            ))
            .with_hint("set TMPDIR to a writable directory")
        };
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&making)
            .map_err(cannot)?;
        let lock = lock(&making)
            .and_then(|lock| std::fs::rename(&making, &dir).map(|_| lock))
            .map_err(|err| {
                let _ = std::fs::remove_dir(&making);
                cannot(err)
            })?;
        let work = dir.join("work");
        let mut outputs = outputs;
        let copied = copy_dir(from, &work, Path::new(""), &mut outputs, false).and_then(|_| {
            // The copy is the sandbox's workspace: its own directory's mode, not 700's parent.
            let mode = std::fs::metadata(from)?.mode() & 0o7777;
            std::fs::set_permissions(&work, std::fs::Permissions::from_mode(mode))
        });
        let layers = match outputs {
            Outputs::Find(found) => found.unwrap_or_default(),
            Outputs::Known(known) => known.to_vec(),
        };
        let roots = copied
            .map_err(|err| err.to_string())
            .and_then(|_| Roots::new(std::slice::from_ref(&work)).map_err(|err| err.to_string()));
        match roots {
            Ok(roots) => Ok(Tree {
                dir,
                _lock: lock,
                work,
                roots,
                originals: Contents::new(),
                current: Contents::new(),
                layers,
                workspace: workspace.to_path_buf(),
                runs_outside: RunsOutside::of(workspace),
                warm: None,
            }),
            Err(err) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(Failure::external(format!(
                    "cannot copy {} for heal: {err}",
                    from.display()
                )))
            }
        }
    }

    /// The copy's root, where the tests run.
    pub(crate) fn path(&self) -> &Path {
        &self.work
    }

    /// A file beside the copy, private to this run and never seen by the tests.
    pub(crate) fn beside(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The file's text: as heal wrote it, else as the copy holds it; None when there is none.
    pub(crate) fn read(&self, path: &str) -> Result<Option<String>, String> {
        if let Some(content) = self.current.get(path) {
            return Ok(content.clone());
        }
        read_file(&self.roots, path)
    }

    /// The file's text in `state` (what `contents` gave; empty: as heal found it).
    pub(crate) fn read_in(&self, state: &Contents, path: &str) -> Result<Option<String>, String> {
        match state.get(path).or_else(|| self.originals.get(path)) {
            Some(content) => Ok(content.clone()),
            None => read_file(&self.roots, path),
        }
    }

    /// Why heal may not write `path`, if it may not: it runs outside the sandbox.
    pub(crate) fn refusal(&self, path: &str) -> Option<String> {
        self.runs_outside
            .matches(path)
            .then(|| self.runs_outside.why(path))
    }

    /// Writes the file in the copy (through the jail: the tests may have put a link there).
    pub(crate) fn write(&mut self, path: &str, text: &str) -> Result<(), String> {
        if let Some(refused) = self.refusal(path) {
            return Err(refused);
        }
        if !self.originals.contains_key(path) {
            let original = read_file(&self.roots, path)?;
            self.originals.insert(path.to_string(), original);
        }
        let confined = self.roots.confine_file(path).map_err(|err| err.0)?;
        // Code the tests ran may have put a link where the file was: it goes, the file comes
        // back (beneath the copy's root only; the jail sees to that).
        if write_atomically(&confined, text.as_bytes(), true).is_err() {
            remove_file(&self.roots, path)?;
            write_atomically(&confined, text.as_bytes(), true).map_err(|err| err.0)?;
        }
        self.current
            .insert(path.to_string(), Some(text.to_string()));
        Ok(())
    }

    /// Before a tool writes `path` in the copy: the file as it was is remembered (on the first
    /// write), and its name as the diff gives it is returned.
    pub(crate) fn will_write(&mut self, path: &str) -> Result<String, String> {
        let confined = self.roots.confine_file(path).map_err(|err| err.0)?;
        let relative = confined.relative.to_string_lossy().into_owned();
        if let Some(refused) = self.refusal(&relative) {
            return Err(refused);
        }
        if !self.originals.contains_key(&relative) {
            let original = read_file(&self.roots, &relative)?;
            self.originals.insert(relative.clone(), original);
        }
        Ok(relative)
    }

    /// After a tool wrote `relative` (named by `will_write`): the file as it is now.
    pub(crate) fn wrote(&mut self, relative: &str) -> Result<(), String> {
        let now = read_file(&self.roots, relative)?;
        self.current.insert(relative.to_string(), now);
        Ok(())
    }

    /// Whether `path` leads through a symbolic link in the copy (a link the project holds, or
    /// one its tests made): an edit there could land in a file other than the one named.
    pub(crate) fn through_link(&self, path: &str) -> bool {
        through_link(&self.work, path)
    }

    /// `text` with the copy's place taken out: the project's own paths, as the model knows them.
    pub(crate) fn without_copy_path(&self, text: &str) -> String {
        let root = self.work.display().to_string();
        text.replace(&format!("{root}/"), "").replace(&root, ".")
    }

    /// The changed files as they are now.
    pub(crate) fn contents(&self) -> Contents {
        self.current
            .iter()
            .filter(|(path, content)| self.originals.get(*path) != Some(content))
            .map(|(path, content)| (path.clone(), content.clone()))
            .collect()
    }

    /// Puts the copy in `state` (what `contents` gave, of this copy or another): files changed
    /// since are rewritten, files heal created since are removed.
    pub(crate) fn restore(&mut self, state: &Contents) -> Result<(), String> {
        let mut paths: Vec<String> = self.current.keys().cloned().collect();
        paths.extend(
            state
                .keys()
                .filter(|path| !self.current.contains_key(*path))
                .cloned(),
        );
        for path in paths {
            if !self.originals.contains_key(&path) {
                let original = read_file(&self.roots, &path)?;
                self.originals.insert(path.clone(), original.clone());
                self.current.insert(path.clone(), original);
            }
            let wanted = state
                .get(&path)
                .cloned()
                .unwrap_or_else(|| self.originals[&path].clone());
            if self.current.get(&path) == Some(&wanted) {
                continue;
            }
            match &wanted {
                Some(text) => self.write(&path, text)?,
                None => {
                    remove_file(&self.roots, &path)?;
                    self.current.insert(path, None);
                }
            }
        }
        Ok(())
    }

    /// The change `state` makes (what `contents` gave) from the state heal started in, as
    /// `git diff` writes it.
    pub(crate) fn diff_of(&self, state: &Contents) -> String {
        state
            .iter()
            .map(|(path, now)| {
                let before = self.originals.get(path).cloned().flatten();
                crate::git::diff::text_patch(
                    path,
                    before.as_deref().map(str::as_bytes),
                    now.as_deref().map(str::as_bytes),
                    0o100644,
                )
            })
            .collect()
    }

    /// The change in the copy now.
    pub(crate) fn diff(&self) -> String {
        self.diff_of(&self.contents())
    }

    /// Writes `state` into `workspace` when every file it touches is still as heal found it.
    /// A write that fails takes back those made before it: the tree is never left half changed.
    pub(crate) fn apply_to(&self, workspace: &Path, state: &Contents) -> Result<Applied, Failure> {
        let roots = Roots::new(&[workspace.to_path_buf()])
            .map_err(|err| Failure::external(format!("{}: {err}", workspace.display())))?;
        let mut moved = Vec::new();
        for path in state.keys() {
            // One that cannot be read (a directory now, a link) is not as heal found it either;
            // nor is one reached through a link in the workspace, where the copy (whose tests
            // may have replaced the link by a directory) had none.
            if read_file(&roots, path).ok().as_ref() != Some(&self.originals[path])
                || through_link(workspace, path)
            {
                moved.push(path.clone());
            }
        }
        if !moved.is_empty() {
            return Ok(Applied::Moved(moved));
        }
        let mut written: Vec<&str> = Vec::new();
        for (path, content) in state {
            let result = match content {
                Some(text) => write_file(&roots, path, text),
                None => remove_file(&roots, path),
            };
            if let Err(err) = result {
                let mut undone = true;
                for done in &written {
                    undone &= match &self.originals[*done] {
                        Some(text) => write_file(&roots, done, text).is_ok(),
                        None => remove_file(&roots, done).is_ok(),
                    };
                }
                let state = if undone {
                    "nothing was changed"
                } else {
                    "and the files written before it could not all be put back"
                };
                return Ok(Applied::Failed(format!(
                    "cannot write {path} in the workspace: {err}; {state}"
                )));
            }
            written.push(path);
        }
        Ok(Applied::Done)
    }
}

/// Whether `path` beneath `root` leads through a symbolic link.
fn through_link(root: &Path, path: &str) -> bool {
    let mut at = root.to_path_buf();
    path.split('/').any(|part| {
        at.push(part);
        std::fs::symlink_metadata(&at).is_ok_and(|meta| meta.file_type().is_symlink())
    })
}

/// What became of a change taken to the user's tree.
pub(crate) enum Applied {
    Done,
    /// These files changed while heal ran: nothing was written.
    Moved(Vec<String>),
    /// A write failed, and what was written before it was taken back.
    Failed(String),
}

fn write_file(roots: &Roots, path: &str, text: &str) -> Result<(), String> {
    let confined = roots.confine_file(path).map_err(|err| err.0)?;
    write_atomically(&confined, text.as_bytes(), true)
        .map(|_| ())
        .map_err(|err| err.0)
}

/// Removes the file (or link) at `path`, through the jail: the directory it is in is opened
/// beneath the root, the name removed there.
fn remove_file(roots: &Roots, path: &str) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let confined = roots.confine_file(path).map_err(|err| err.0)?;
    let name = confined
        .relative
        .file_name()
        .ok_or_else(|| format!("{path}: not a file path"))?;
    let parent = confined.beside(
        confined
            .relative
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    );
    let dir = jail::open(
        &parent,
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        0,
    )
    .map_err(|err| err.0)?;
    let name =
        std::ffi::CString::new(name.as_bytes()).map_err(|_| format!("{path}: a NUL byte"))?;
    let flag = nix::unistd::UnlinkatFlags::NoRemoveDir;
    match nix::unistd::unlinkat(&dir, name.as_c_str(), flag) {
        Ok(()) | Err(nix::errno::Errno::ENOENT) => Ok(()),
        Err(errno) => Err(format!(
            "cannot remove {path}: {}",
            std::io::Error::from(errno)
        )),
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        // Stopped first: it runs in the copy.
        self.warm = None;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Removes the copies in `temp` that runs killed before they could (SIGKILL, a power cut) left:
/// ours, and locked by no run.
fn remove_abandoned_copies(temp: &Path) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    let uid = nix::unistd::geteuid().as_raw();
    for entry in entries.flatten() {
        if !entry
            .file_name()
            .as_encoded_bytes()
            .starts_with(COPY_PREFIX.as_bytes())
        {
            continue;
        }
        let path = entry.path();
        let ours = path
            .symlink_metadata()
            .is_ok_and(|meta| meta.is_dir() && meta.uid() == uid);
        // Not locked: its run is gone (a run in another pid namespace holds its lock too).
        if let (true, Ok(_held)) = (ours, lock(&path)) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// The directory `dir` (never through a link), locked for this run, or an error if a run holds it.
fn lock(dir: &Path) -> std::io::Result<nix::fcntl::Flock<std::fs::File>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(dir)?;
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
        .map_err(|(_, errno)| errno.into())
}

/// A file's text through the jail; None when there is no such file.
fn read_file(roots: &Roots, path: &str) -> Result<Option<String>, String> {
    let confined = roots.confine_file(path).map_err(|err| err.0)?;
    match jail::open(
        &confined,
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        0,
    ) {
        Ok(file) => match file.metadata() {
            Ok(meta) if meta.is_file() && meta.len() <= MAX_FILE => {
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_FILE), &mut bytes)
                    .map_err(|err| format!("{path}: {err}"))?;
                // Text read with its bytes replaced would be written back so: left alone.
                String::from_utf8(bytes)
                    .map(Some)
                    .map_err(|_| format!("{path} is not UTF-8 text: heal changes UTF-8 files only"))
            }
            Ok(_) => Err(format!("{path} is not a regular file of at most 16 MiB")),
            Err(err) => Err(format!("{path}: {err}")),
        },
        Err(err) if err.0.ends_with("no such file or directory") => Ok(None),
        Err(err) => Err(err.0),
    }
}

/// Whether build outputs of `workspace` can be shown to the tests rather than copied: an
/// overlay's options cannot spell a path holding `,` `:` or `\`; `AUTOCODER_COPY_BUILD_OUTPUTS`
/// asks for copies.
fn can_layer(workspace: &Path) -> bool {
    let spelled = !workspace
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .any(|b| b",:\\".contains(b));
    spelled && std::env::var_os("AUTOCODER_COPY_BUILD_OUTPUTS").is_none()
}

/// Whether `path`, a directory named `name`, holds build outputs: `node_modules`, or cargo's
/// `target` (it tags it as a cache).
fn is_build_output(path: &Path, name: &std::ffi::OsStr) -> bool {
    name == "node_modules" || name == "target" && path.join("CACHEDIR.TAG").is_file()
}

/// Copies the directory `from` to `to` (at `relative` in the copy): files with their modes,
/// links as links, no `.git`, no sockets, FIFOs or devices; build outputs as empty directories,
/// where the sandbox shows them, when `outputs` says so.
fn copy_dir(
    from: &Path,
    to: &Path,
    relative: &Path,
    outputs: &mut Outputs,
    in_venv: bool,
) -> std::io::Result<()> {
    std::fs::DirBuilder::new().mode(0o700).create(to)?;
    let in_venv = in_venv || from.join("pyvenv.cfg").exists();
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        // The project's own bytecode is not taken: a run in the workspace could have left it
        // for code it is not (heal's runs read bytecode, never write it; see testrun/cache.rs).
        if name == ".git" || (name == "__pycache__" && !in_venv) {
            continue;
        }
        let (source, target) = (entry.path(), to.join(&name));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            let at = relative.join(&name);
            let layered = match outputs {
                Outputs::Known(known) => known.contains(&at),
                Outputs::Find(Some(found)) if found.len() < MAX_LAYERS => {
                    let output = is_build_output(&source, &name);
                    if output {
                        found.push(at.clone());
                    }
                    output
                }
                Outputs::Find(_) => false,
            };
            match layered {
                true => std::fs::DirBuilder::new().mode(0o700).create(&target)?,
                false => copy_dir(&source, &target, &at, outputs, in_venv)?,
            }
            let mode = entry.metadata()?.mode() & 0o7777;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode))?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source)?, &target)?;
        } else if kind.is_file() {
            std::fs::copy(&source, &target)?;
            // Its time kept: bytecode made for it is then still taken for it.
            let modified = nix::sys::stat::stat(&source)?;
            let time = nix::sys::time::TimeSpec::new;
            nix::sys::stat::utimensat(
                nix::fcntl::AT_FDCWD,
                &target,
                &time(modified.st_atime, modified.st_atime_nsec),
                &time(modified.st_mtime, modified.st_mtime_nsec),
                nix::sys::stat::UtimensatFlags::NoFollowSymlink,
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_outputs_are_left_to_the_sandbox_to_show_and_other_directories_copied() {
        let workspace = tempfile::tempdir().unwrap();
        let root = workspace.path();
        for file in [
            "node_modules/pad/index.js",
            "web/node_modules/x.js",
            "target/CACHEDIR.TAG",
            "target/debug/a",
            "docs/target/page.md",
        ] {
            std::fs::create_dir_all(root.join(file).parent().unwrap()).unwrap();
            std::fs::write(root.join(file), "x").unwrap();
        }
        let tree = Tree::copy_of(root, true).unwrap();
        let mut found: Vec<(PathBuf, PathBuf)> = tree
            .layered()
            .into_iter()
            .map(|layer| (layer.at, layer.lower))
            .collect();
        let mut expected: Vec<(PathBuf, PathBuf)> = ["node_modules", "target", "web/node_modules"]
            .into_iter()
            .map(|at| (PathBuf::from(at), root.join(at)))
            .collect();
        found.sort();
        expected.sort();
        assert_eq!(found, expected);
        // Their places are empty in the copy; a `target` that is no cargo's is copied.
        let copy = tree.path();
        assert_eq!(
            std::fs::read_dir(copy.join("node_modules"))
                .unwrap()
                .count(),
            0
        );
        assert_eq!(std::fs::read_dir(copy.join("target")).unwrap().count(), 0);
        assert!(copy.join("docs/target/page.md").is_file());
        // Another copy shows the same, from the workspace.
        let another = tree.another().unwrap();
        let mut again: Vec<(PathBuf, PathBuf)> = another
            .layered()
            .into_iter()
            .map(|layer| (layer.at, layer.lower))
            .collect();
        again.sort();
        assert_eq!(again, expected);
        // Copied whole, when asked for.
        let copied = Tree::copy_of(root, false).unwrap();
        assert!(copied.layered().is_empty());
        assert!(copied.path().join("node_modules/pad/index.js").is_file());
    }

    #[test]
    fn a_file_that_is_not_utf8_is_not_read_as_text() {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::write(workspace.path().join("latin.py"), b"# caf\xe9\nx = 1\n").unwrap();
        let tree = Tree::copy_of(workspace.path(), true).unwrap();
        let err = tree.read("latin.py").unwrap_err();
        assert!(err.contains("not UTF-8"), "{err}");
    }

    #[test]
    fn a_copy_takes_the_state_another_copy_reached_and_goes_back() {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::write(workspace.path().join("a.py"), "a = 1\n").unwrap();
        std::fs::write(workspace.path().join("b.py"), "b = 1\n").unwrap();
        let mut first = Tree::copy_of(workspace.path(), true).unwrap();
        first.write("a.py", "a = 2\n").unwrap();
        let best = first.contents();
        let mut second = first.another().unwrap();
        assert_ne!(second.path(), first.path());
        assert_eq!(second.read("a.py").unwrap().as_deref(), Some("a = 2\n"));
        // The second copy changes a file the first never wrote, and makes one.
        second.write("b.py", "b = 2\n").unwrap();
        second.write("c.py", "c = 1\n").unwrap();
        let reached = second.contents();
        first.restore(&reached).unwrap();
        assert_eq!(first.contents(), reached);
        assert_eq!(
            std::fs::read_to_string(first.path().join("b.py")).unwrap(),
            "b = 2\n"
        );
        assert_eq!(
            std::fs::read_to_string(first.path().join("c.py")).unwrap(),
            "c = 1\n"
        );
        // And back to the state before: the file made is gone, the others as they were.
        first.restore(&best).unwrap();
        assert_eq!(first.contents(), best);
        assert!(!first.path().join("c.py").exists());
        assert_eq!(
            std::fs::read_to_string(first.path().join("b.py")).unwrap(),
            "b = 1\n"
        );
        assert!(first.diff().contains("+a = 2"));
        let copy = second.path().to_path_buf();
        drop(second);
        assert!(!copy.exists(), "a copy is removed when dropped");
        // The user's tree was never written.
        assert_eq!(
            std::fs::read_to_string(workspace.path().join("a.py")).unwrap(),
            "a = 1\n"
        );
    }
}
