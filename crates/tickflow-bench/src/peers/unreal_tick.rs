//! An Unreal-style tick manager, written for the benchmark: the way `FTickTaskManager` queues
//! work each frame. Every frame it walks every enabled function, queues its prerequisites
//! first (recursively, with a per-frame visited stamp), computes the actual group as the latest
//! of its own and its prerequisites', buckets functions by group, then runs the buckets.

pub type TickFn = Box<dyn FnMut(&mut u64)>;

struct Func {
    group: usize,
    prereqs: Vec<usize>,
    enabled: bool,
    visited: u64,
    actual: usize,
    f: TickFn,
}

#[derive(Default)]
pub struct UnrealTicks {
    funcs: Vec<Func>,
    frame: u64,
    buckets: [Vec<usize>; 7],
}

impl UnrealTicks {
    pub fn add(&mut self, group: usize, f: TickFn) -> usize {
        self.funcs.push(Func {
            group,
            prereqs: Vec::new(),
            enabled: true,
            visited: 0,
            actual: group,
            f,
        });
        self.funcs.len() - 1
    }

    pub fn add_prerequisite(&mut self, tick: usize, before: usize) {
        self.funcs[tick].prereqs.push(before);
    }

    fn queue(&mut self, i: usize) -> usize {
        if self.funcs[i].visited == self.frame {
            return self.funcs[i].actual;
        }
        self.funcs[i].visited = self.frame;
        let mut actual = self.funcs[i].group;
        for k in 0..self.funcs[i].prereqs.len() {
            let p = self.funcs[i].prereqs[k];
            if self.funcs[p].enabled {
                actual = actual.max(self.queue(p));
            }
        }
        while actual == 1 || actual == 3 {
            actual += 1;
        }
        self.funcs[i].actual = actual;
        self.buckets[actual].push(i);
        actual
    }

    pub fn tick(&mut self, ctx: &mut u64) {
        self.frame += 1;
        for i in 0..self.funcs.len() {
            if self.funcs[i].enabled {
                self.queue(i);
            }
        }
        for g in 0..7 {
            let bucket = std::mem::take(&mut self.buckets[g]);
            for &i in &bucket {
                (self.funcs[i].f)(ctx);
            }
            self.buckets[g] = bucket;
            self.buckets[g].clear();
        }
    }
}
