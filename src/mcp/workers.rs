//! The threads tool calls run on. Calls run concurrently (a test run must not hold up a read),
//! but starting a thread per call cost more than a small call itself (clone, a fresh stack and
//! its page faults), so finished workers wait for the next call; a call that finds none idle
//! starts one more, up to MAX_WORKERS. Idle workers are reserved at dispatch, so a call never
//! waits behind a running one unless that many run at once (a client sending hundreds of
//! commands at a time would otherwise get as many threads and their memory).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

type Job = Box<dyn FnOnce() + Send>;

/// Calls running at once at most; more wait for a worker.
const MAX_WORKERS: usize = 32;

pub(super) struct Workers {
    jobs: Option<Sender<Job>>,
    queue: Arc<Mutex<Receiver<Job>>>,
    /// Workers waiting for a job and not yet promised one.
    idle: Arc<AtomicUsize>,
    /// Jobs given and not yet done.
    busy: Arc<AtomicUsize>,
    threads: Vec<JoinHandle<()>>,
}

impl Workers {
    pub(super) fn new() -> Workers {
        let (jobs, queue) = mpsc::channel();
        Workers {
            jobs: Some(jobs),
            queue: Arc::new(Mutex::new(queue)),
            idle: Arc::new(AtomicUsize::new(0)),
            busy: Arc::new(AtomicUsize::new(0)),
            threads: Vec::new(),
        }
    }

    /// Runs `job` at once on an idle worker, or on a new one when all are busy.
    pub(super) fn run(&mut self, job: impl FnOnce() + Send + 'static) {
        let reserved = self
            .idle
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        self.busy.fetch_add(1, Ordering::SeqCst);
        let busy = self.busy.clone();
        let job: Job = Box::new(move || {
            job();
            busy.fetch_sub(1, Ordering::SeqCst);
        });
        if reserved || self.threads.len() >= MAX_WORKERS {
            // The channel is open while `self` lives; a reserved worker is waiting on it, or
            // the first to finish takes the job.
            self.jobs.as_ref().unwrap().send(job).ok();
            return;
        }
        let queue = self.queue.clone();
        let idle = self.idle.clone();
        self.threads.push(std::thread::spawn(move || {
            job();
            loop {
                idle.fetch_add(1, Ordering::SeqCst);
                // The lock is held only while waiting; the job runs without it.
                let next = queue.lock().unwrap().recv();
                match next {
                    Ok(job) => job(),
                    Err(_) => return,
                }
            }
        }));
    }

    /// Waits for the calls in progress to finish: `grace` at first, then, after `cancel`, as
    /// long again at most (a call that does not stop is left to end with the process). Idle
    /// workers are kept until then: a process a worker started (a git reader) is sent its
    /// death signal when that thread ends, and a call still running may be using it.
    pub(super) fn finish(mut self, grace: Duration, cancel: impl FnOnce()) {
        let all_done = |busy: &AtomicUsize| {
            let deadline = Instant::now() + grace;
            while busy.load(Ordering::SeqCst) > 0 {
                if Instant::now() > deadline {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            true
        };
        if !all_done(&self.busy) {
            cancel();
            if !all_done(&self.busy) {
                return;
            }
        }
        drop(self.jobs.take());
        for thread in std::mem::take(&mut self.threads) {
            let _ = thread.join();
        }
    }
}
