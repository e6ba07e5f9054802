//! An Unreal-style timer manager, written for the benchmarks as a peer: the shape of
//! `FTimerManager` (a sparse array of timer records, a binary heap of handles ordered by
//! expiry looked up through the handle, lazy removal of cleared timers, an `f64` clock, and
//! `CallCount` bursts that run a late looping timer back to back). Not tickflow code.

/// The callback every peer stores: boxed, as users write them.
pub type Callback = Box<dyn FnMut(&mut u64)>;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct UHandle {
    index: u32,
    serial: u32,
}

#[derive(PartialEq, Eq)]
enum Status {
    Active,
    ActivePendingRemoval,
}

struct UTimer {
    serial: u32,
    expire: f64,
    rate: f64,
    looping: bool,
    status: Status,
    callback: Callback,
}

#[derive(Default)]
pub struct UnrealTimers {
    timers: Vec<Option<UTimer>>,
    free: Vec<u32>,
    heap: Vec<UHandle>,
    clock: f64,
    serial: u32,
}

impl UnrealTimers {
    fn expire(&self, h: UHandle) -> f64 {
        self.timers[h.index as usize].as_ref().unwrap().expire
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.expire(self.heap[i]) < self.expire(self.heap[parent]) {
                self.heap.swap(i, parent);
                i = parent;
            } else {
                break;
            }
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < n && self.expire(self.heap[l]) < self.expire(self.heap[m]) {
                m = l;
            }
            if r < n && self.expire(self.heap[r]) < self.expire(self.heap[m]) {
                m = r;
            }
            if m == i {
                break;
            }
            self.heap.swap(i, m);
            i = m;
        }
    }

    fn pop(&mut self) -> UHandle {
        let top = self.heap.swap_remove(0);
        if !self.heap.is_empty() {
            self.sift_down(0);
        }
        top
    }

    pub fn set(&mut self, rate: f64, looping: bool, callback: Callback) -> UHandle {
        self.serial += 1;
        let timer = UTimer {
            serial: self.serial,
            expire: self.clock + rate,
            rate,
            looping,
            status: Status::Active,
            callback,
        };
        let index = match self.free.pop() {
            Some(i) => {
                self.timers[i as usize] = Some(timer);
                i
            }
            None => {
                self.timers.push(Some(timer));
                (self.timers.len() - 1) as u32
            }
        };
        let h = UHandle {
            index,
            serial: self.serial,
        };
        self.heap.push(h);
        self.sift_up(self.heap.len() - 1);
        h
    }

    /// Unreal marks an active timer for removal; the heap entry goes when it is popped.
    pub fn clear(&mut self, h: UHandle) -> bool {
        match self.timers[h.index as usize].as_mut() {
            Some(t) if t.serial == h.serial && t.status == Status::Active => {
                t.status = Status::ActivePendingRemoval;
                true
            }
            _ => false,
        }
    }

    /// Strict `>` boundary and CallCount bursts, as in Unreal.
    pub fn tick(&mut self, dt: f64, ctx: &mut u64) {
        self.clock += dt;
        while let Some(&top) = self.heap.first() {
            let t = self.timers[top.index as usize].as_ref().unwrap();
            if t.status == Status::ActivePendingRemoval {
                self.pop();
                self.timers[top.index as usize] = None;
                self.free.push(top.index);
                continue;
            }
            // Unreal fires only when the clock is strictly past the expiry.
            if self.clock <= t.expire {
                break;
            }
            self.pop();
            let t = self.timers[top.index as usize].as_mut().unwrap();
            let calls = if t.looping {
                ((self.clock - t.expire) / t.rate).trunc() as u64 + 1
            } else {
                1
            };
            for _ in 0..calls {
                (t.callback)(ctx);
            }
            if t.looping {
                t.expire += calls as f64 * t.rate;
                self.heap.push(top);
                self.sift_up(self.heap.len() - 1);
            } else {
                self.timers[top.index as usize] = None;
                self.free.push(top.index);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}
