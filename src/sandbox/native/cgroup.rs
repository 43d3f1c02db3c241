//! The cgroup layer: aggregate memory, process and CPU limits for everything the command starts,
//! and a record of which limit was hit.
//!
//! rlimits cannot do this job: `RLIMIT_NPROC` is per user (and ignored for root), `RLIMIT_AS`
//! breaks Node and the JVM, and none of them add up a process tree. One cgroup per run is made
//! under our own cgroup in each cgroup v1 hierarchy (memory, pids, cpu); the child joins them
//! before it starts the command, and they are removed when the run is over. A sandbox killed
//! outright (SIGKILL) cannot remove its own; the next run beside it removes those whose sandbox
//! is gone. Where we may not create cgroups (an ordinary user), the caller falls back to rlimits
//! and says so in the result.

use std::fs;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// One run's cgroups, removed on drop.
#[derive(Debug)]
pub struct RunCgroups {
    memory: PathBuf,
    pids: PathBuf,
    cpu: PathBuf,
}

/// What the cgroups recorded about the run.
#[derive(Debug, Default, Clone, Copy)]
pub struct CgroupEvents {
    pub oom_killed: bool,
    pub pids_max_hit: bool,
}

impl RunCgroups {
    /// Creates the run's cgroups with their limits, or says why it cannot.
    pub fn create(memory_bytes: u64, pids: u32, cpus: f64) -> Result<RunCgroups, String> {
        let name = format!(
            "autocoder-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0)
        );
        let own = fs::read_to_string("/proc/self/cgroup")
            .map_err(|err| format!("cannot read /proc/self/cgroup: {err}"))?;
        let dir_for = |controller: &str| -> Result<PathBuf, String> {
            let mount = Path::new("/sys/fs/cgroup").join(controller);
            let relative = own
                .lines()
                .filter_map(|line| line.split(':').nth(1).zip(line.splitn(3, ':').nth(2)))
                .find(|(controllers, _)| controllers.split(',').any(|c| c == controller))
                .map(|(_, path)| path.trim_start_matches('/'))
                .ok_or_else(|| format!("no cgroup v1 {controller} hierarchy is mounted"))?;
            if !mount.join("cgroup.procs").exists() {
                return Err(format!(
                    "no cgroup v1 {controller} hierarchy at {}",
                    mount.display()
                ));
            }
            Ok(mount.join(relative).join(&name))
        };
        let cgroups = RunCgroups {
            memory: dir_for("memory")?,
            pids: dir_for("pids")?,
            cpu: dir_for("cpu")?,
        };
        for dir in [&cgroups.memory, &cgroups.pids, &cgroups.cpu] {
            remove_left_behind(dir.parent().unwrap_or(dir));
            fs::create_dir(dir).map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
        }
        let period: u64 = 100_000;
        let quota = ((cpus * period as f64) as u64).max(1000);
        write_value(&cgroups.memory.join("memory.limit_in_bytes"), memory_bytes)?;
        let swap = cgroups.memory.join("memory.memsw.limit_in_bytes");
        if swap.exists() {
            write_value(&swap, memory_bytes)?;
        }
        write_value(&cgroups.pids.join("pids.max"), u64::from(pids))?;
        write_value(&cgroups.cpu.join("cpu.cfs_period_us"), period)?;
        write_value(&cgroups.cpu.join("cpu.cfs_quota_us"), quota)?;
        Ok(cgroups)
    }

    /// Opens the `tasks` files the child writes `0` into to join (see `child`).
    pub fn open_tasks(&self) -> Result<Vec<OwnedFd>, String> {
        [&self.memory, &self.pids, &self.cpu]
            .into_iter()
            .map(|dir| {
                let path = dir.join("tasks");
                fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map(OwnedFd::from)
                    .map_err(|err| format!("cannot open {}: {err}", path.display()))
            })
            .collect()
    }

    pub fn events(&self) -> CgroupEvents {
        let counter = |path: PathBuf, key: &str| -> u64 {
            fs::read_to_string(path)
                .ok()
                .and_then(|text| {
                    text.lines().find_map(|line| {
                        line.strip_prefix(key)
                            .and_then(|rest| rest.trim().parse().ok())
                    })
                })
                .unwrap_or(0)
        };
        CgroupEvents {
            oom_killed: counter(self.memory.join("memory.oom_control"), "oom_kill ") > 0,
            pids_max_hit: counter(self.pids.join("pids.events"), "max ") > 0,
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
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0 && super::sys::errno() == libc::ESRCH;
        if gone {
            let _ = fs::remove_dir(entry.path());
        }
    }
}

fn write_value(path: &Path, value: u64) -> Result<(), String> {
    fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|mut file| file.write_all(value.to_string().as_bytes()))
        .map_err(|err| format!("cannot write {}: {err}", path.display()))
}
