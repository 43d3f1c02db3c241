//! The cgroup layer: aggregate memory, process and CPU limits for everything the command starts,
//! and a record of which limit was hit.
//!
//! rlimits cannot do this job: `RLIMIT_NPROC` is per user (and ignored for root), `RLIMIT_AS`
//! breaks Node and the JVM, and none of them add up a process tree. One cgroup per run is made
//! under our own cgroup in each cgroup v1 hierarchy (memory, pids, cpu), and removed when the run
//! is over. The parent finds where they go, makes them and writes their limits after starting the
//! child, which sets up the command's view and layers meanwhile; the command then joins them
//! itself, just before exec, by writing to their `tasks` files, which the parent opens and hands
//! over (`JoinPlan`). Opened by the parent, they admit the command after the child has given up its
//! privileges: cgroup v1 checks the credentials of whoever opened the file. The child, the
//! namespace's init, stays out of them, so that they can be removed as soon as the command and its
//! processes are gone, while the init is still on its way out. A sandbox killed outright (SIGKILL)
//! cannot remove its own; the next run beside it removes those whose sandbox is gone, while its
//! command runs (`while_running`), when it has nothing else to do. Where we may not create cgroups
//! (an ordinary user, no v1 hierarchies), the caller falls back to rlimits and says why in the
//! result: for an ordinary user, what a cgroup v2 subtree delegated to them lacks (the v1
//! hierarchies are root's), or that it has what a run needs and is not used yet.

use std::fs::{self, File};
use std::io::{Read, Seek, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// The hierarchies the run's cgroups are made in.
const CONTROLLERS: [&str; 3] = ["memory", "pids", "cpu"];

/// Where the cgroup v1 hierarchy of `controller` is mounted.
fn hierarchy(controller: &str) -> PathBuf {
    Path::new("/sys/fs/cgroup").join(controller)
}

/// Why an ordinary user's run makes no cgroups: what is missing for a cgroup v2 subtree of the
/// user's own, with the memory and pids controllers, where the run's cgroups could go.
pub(crate) fn refusal_for_ordinary_users() -> String {
    match delegated_v2_cgroup() {
        Ok(dir) => format!(
            "the cgroup v2 subtree {} is delegated to you with the memory and pids controllers, \
             but the sandbox makes cgroups only in the v1 hierarchies, as root",
            dir.display()
        ),
        Err(missing) => missing,
    }
}

/// Our cgroup v2 directory, if it is ours (delegated, as systemd does for `Delegate=yes`) and
/// offers the memory and pids controllers; or what is missing.
fn delegated_v2_cgroup() -> Result<PathBuf, String> {
    use std::os::unix::fs::MetadataExt;
    let read =
        |path: &str| fs::read_to_string(path).map_err(|err| format!("cannot read {path}: {err}"));
    let mounts = read("/proc/self/mountinfo")?;
    let mount = mounts
        .lines()
        .find_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            right
                .starts_with("cgroup2 ")
                .then(|| left.split(' ').nth(4))
                .flatten()
        })
        .ok_or("no cgroup v2 hierarchy is mounted, and the v1 hierarchies are root's")?;
    let own = read("/proc/self/cgroup")?;
    let relative = own
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .ok_or("this process is in no cgroup v2 cgroup")?;
    let dir = match relative.trim_start_matches('/') {
        "" => PathBuf::from(mount),
        below => Path::new(mount).join(below),
    };
    let owner = fs::metadata(&dir)
        .map_err(|err| format!("cannot read {}: {err}", dir.display()))?
        .uid();
    if owner != nix::unistd::geteuid().as_raw() {
        return Err(format!(
            "your cgroup {} is not delegated to you (it is uid {owner}'s): start autocoder in one \
             that is, e.g. under `systemd-run --user --scope -p Delegate=yes`",
            dir.display()
        ));
    }
    let controllers = read(&dir.join("cgroup.controllers").to_string_lossy())?;
    let offered: Vec<&str> = controllers.split_whitespace().collect();
    let missing: Vec<&str> = ["memory", "pids"]
        .into_iter()
        .filter(|needed| !offered.contains(needed))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "your delegated cgroup {} has no {} controller (it offers: {})",
            dir.display(),
            missing.join(" nor "),
            if offered.is_empty() {
                "none".to_string()
            } else {
                offered.join(", ")
            }
        ));
    }
    Ok(dir)
}

/// One run's cgroups, removed on drop (those that were made).
#[derive(Debug)]
pub(crate) struct RunCgroups {
    memory: PathBuf,
    pids: PathBuf,
    cpu: PathBuf,
    /// `memory.oom_control` and `pids.events`, opened while the command runs.
    event_files: Option<(File, File)>,
}

/// What the run's cgroups recorded about the run.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct CgroupEvents {
    pub oom_killed: bool,
    pub pids_max_hit: bool,
}

impl RunCgroups {
    /// The name of this run's cgroups (the same in each hierarchy).
    pub(crate) fn name_for_this_run() -> String {
        format!(
            "autocoder-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0)
        )
    }

    /// Whether the cgroup v1 hierarchies we need are mounted; checked before the child starts,
    /// so that a host without them (cgroup v2 only) does not start it twice.
    pub(crate) fn hierarchies_mounted() -> Result<(), String> {
        for controller in CONTROLLERS {
            let mount = hierarchy(controller);
            if !mount.join("cgroup.procs").exists() {
                return Err(format!(
                    "no cgroup v1 {controller} hierarchy at {}",
                    mount.display()
                ));
            }
        }
        Ok(())
    }

    /// Where the run's cgroups `name` go, once we know we may make them there; or why we may
    /// not.
    pub(crate) fn locate(name: &str) -> Result<RunCgroups, String> {
        let own = fs::read_to_string("/proc/self/cgroup")
            .map_err(|err| format!("cannot read /proc/self/cgroup: {err}"))?;
        let dir_for = |controller: &str| -> Result<PathBuf, String> {
            let relative = own
                .lines()
                .filter_map(|line| line.split(':').nth(1).zip(line.splitn(3, ':').nth(2)))
                .find(|(controllers, _)| controllers.split(',').any(|c| c == controller))
                .map(|(_, path)| path.trim_start_matches('/'))
                .ok_or_else(|| format!("no cgroup v1 {controller} hierarchy is mounted"))?;
            Ok(hierarchy(controller).join(relative))
        };
        let [memory, pids, cpu] = CONTROLLERS;
        let parents = [dir_for(memory)?, dir_for(pids)?, dir_for(cpu)?];
        for dir in &parents {
            if let Err(errno) = nix::unistd::access(dir.as_path(), nix::unistd::AccessFlags::W_OK) {
                return Err(format!(
                    "cannot create cgroups in {}: {}",
                    dir.display(),
                    std::io::Error::from(errno)
                ));
            }
        }
        let [memory, pids, cpu] = parents.map(|dir| dir.join(name));
        Ok(RunCgroups {
            memory,
            pids,
            cpu,
            event_files: None,
        })
    }

    /// Makes the run's cgroups and writes their limits.
    pub(crate) fn create(&self, memory_bytes: u64, pids: u32, cpus: f64) -> Result<(), String> {
        for dir in [&self.memory, &self.pids, &self.cpu] {
            fs::create_dir(dir).map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
        }
        // A new cgroup's CFS period is always the kernel's default, 100 ms.
        let period: u64 = 100_000;
        let quota = ((cpus * period as f64) as u64).max(1000);
        let limit = |path: PathBuf, value: u64| {
            write_value(&path, value)
                .map_err(|err| format!("cannot write {}: {err}", path.display()))
        };
        limit(self.memory.join("memory.limit_in_bytes"), memory_bytes)?;
        // Swap is counted only where the kernel accounts it (swapaccount=1).
        let swap = self.memory.join("memory.memsw.limit_in_bytes");
        match write_value(&swap, memory_bytes) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("cannot write {}: {err}", swap.display()))
            }
            _ => {}
        }
        limit(self.pids.join("pids.max"), u64::from(pids))?;
        limit(self.cpu.join("cpu.cfs_quota_us"), quota)
    }

    /// What can wait until the command runs: removing the cgroups of runs killed outright, and
    /// opening the files `events` reads.
    pub(crate) fn while_running(&mut self) {
        for dir in [&self.memory, &self.pids, &self.cpu] {
            remove_left_behind(dir.parent().unwrap_or(dir));
        }
        self.event_files = File::open(self.memory.join("memory.oom_control"))
            .and_then(|oom| Ok((oom, File::open(self.pids.join("pids.events"))?)))
            .ok();
    }

    /// The `tasks` file of each of the run's cgroups, open for writing: what the command joins
    /// them through.
    pub(crate) fn open_tasks_files(&self) -> Result<Vec<OwnedFd>, String> {
        [&self.memory, &self.pids, &self.cpu]
            .into_iter()
            .map(|dir| {
                let path = dir.join("tasks");
                File::options()
                    .write(true)
                    .open(&path)
                    .map(OwnedFd::from)
                    .map_err(|err| format!("cannot open {}: {err}", path.display()))
            })
            .collect()
    }

    pub(crate) fn events(&self) -> CgroupEvents {
        let counter = |mut file: &File, key: &str| -> u64 {
            let mut text = String::new();
            file.rewind()
                .and_then(|()| file.read_to_string(&mut text))
                .ok()
                .and_then(|_| {
                    text.lines().find_map(|line| {
                        line.strip_prefix(key)
                            .and_then(|rest| rest.trim().parse().ok())
                    })
                })
                .unwrap_or(0)
        };
        let Some((oom, pids)) = &self.event_files else {
            return CgroupEvents::default();
        };
        CgroupEvents {
            oom_killed: counter(oom, "oom_kill ") > 0,
            pids_max_hit: counter(pids, "max ") > 0,
        }
    }
}

impl Drop for RunCgroups {
    fn drop(&mut self) {
        for dir in [&self.memory, &self.pids, &self.cpu] {
            // The last process may still be on its way out of the cgroup; retry briefly.
            for _ in 0..100 {
                match fs::remove_dir(dir) {
                    Err(err) if err.raw_os_error() == Some(libc::EBUSY) => {
                        std::thread::sleep(std::time::Duration::from_millis(1))
                    }
                    _ => break,
                }
            }
        }
    }
}

/// Removes the run cgroups in `parent` whose sandbox process is gone (killed before it could
/// remove them); ones still in use cannot be removed, and are left.
fn remove_left_behind(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix("autocoder-"))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        // No signal: only whether the process exists.
        let gone = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
            == Err(nix::errno::Errno::ESRCH);
        if gone {
            let _ = fs::remove_dir(entry.path());
        }
    }
}

fn write_value(path: &Path, value: u64) -> std::io::Result<()> {
    fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|mut file| file.write_all(value.to_string().as_bytes()))
}
