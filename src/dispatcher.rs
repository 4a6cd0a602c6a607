//! The host's waker: one Rust thread per pool that sleeps on the doorbell and,
//! when a worker rings, schedules the host's drain on the libuv loop (through
//! a napi ThreadsafeFunction in `bindings.rs`; here it is any callback, so
//! the thread logic is testable without Node).

use std::thread::JoinHandle;

use crate::doorbell::{Doorbell, Wake};

pub struct Dispatcher {
    bell: Doorbell,
    thread: Option<JoinHandle<()>>,
}

impl Dispatcher {
    /// Starts the waiter. `on_ring` runs on the waiter thread, once per
    /// arming that a publication answered; it must not block.
    pub fn start<F>(bell: Doorbell, mut on_ring: F) -> std::io::Result<Self>
    where
        F: FnMut() + Send + 'static,
    {
        // Snapshot before the thread exists: a ring that lands before the
        // thread first runs is then seen as a moved count, not lost.
        let mut last = bell.counter();
        let waiter = bell.clone();
        let thread = std::thread::Builder::new()
            .name("knitting-doorbell".into())
            .spawn(move || {
                while waiter.wait(&mut last) == Wake::Ring {
                    on_ring();
                }
            })?;
        Ok(Self {
            bell,
            thread: Some(thread),
        })
    }

    /// Stops and joins the waiter. Idempotent.
    pub fn stop(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.bell.stop();
            // A panic on the waiter thread has nothing left to clean up.
            let _ = thread.join();
        }
    }

    pub fn running(&self) -> bool {
        self.thread.is_some()
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::layout::region_bytes;
    use crate::memory::region::SharedMemory;
    use std::sync::mpsc;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn rings_once_per_arming_and_stops() {
        let len = region_bytes(1, 0).unwrap();
        let mut buf = vec![0u64; len / 8];
        // SAFETY: `buf` outlives the dispatcher (stopped below before drop).
        let mem = unsafe { SharedMemory::new(buf.as_mut_ptr().cast(), len) }.unwrap();
        let bell = Doorbell::new(Arc::new(mem)).unwrap();
        let (tx, rx) = mpsc::channel();
        let mut dispatcher = Dispatcher::start(bell.clone(), move || tx.send(()).unwrap()).unwrap();

        // A ring before the host is armed never reaches the host...
        bell.publish();
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
        // ...an armed host is rung once, however many publications follow.
        assert!(bell.arm(bell.counter()));
        bell.publish();
        bell.publish();
        rx.recv_timeout(Duration::from_secs(5))
            .expect("armed host is rung");
        assert!(
            rx.recv_timeout(Duration::from_millis(50)).is_err(),
            "one ring per arming"
        );

        dispatcher.stop();
        assert!(!dispatcher.running());
        dispatcher.stop();
        drop(buf);
    }
}
