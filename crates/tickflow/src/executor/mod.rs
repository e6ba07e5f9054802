//! The executor of async tasks (reached by users through [`latent`](crate::latent), whose
//! module docs give the rules). From the bottom up, each file importing only those before it:
//!
//! - `lend.rs`: the unsafe part: lending the context to a task for one closure call, and the
//!   activation through which task futures reach their executor on this thread;
//! - `slots.rs`: a task's shared part and the executor's slots;
//! - `factory.rs`: what a spawn needs, shared with `Commands` (any thread);
//! - `exec.rs`: the executor's state and operations;
//! - `wait.rs`, `task.rs`: the futures a task awaits, and `TaskCx`, `TaskHandle`, `TaskRef`;
//! - `poll.rs`: the task part of the latent stage;
//! - `spawn.rs`, `tasks.rs`: spawning, and the `Tasks` door.

mod exec;
mod factory;
mod lend;
mod poll;
mod slots;
mod spawn;
mod task;
mod tasks;
mod wait;

pub use poll::MAX_TASK_PASSES;
pub use task::{Cancelled, TaskCx, TaskHandle, TaskRef};
pub use tasks::Tasks;
pub use wait::{NextFrame, Sleep, Until};

pub(crate) use exec::Exec;
pub(crate) use factory::{NewTask, TaskFactory};
pub(crate) use spawn::{make as make_task, spawn_from};
