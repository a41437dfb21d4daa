//! A Boa job executor that really waits: microtasks are drained, then the executor blocks on the
//! pending host futures (sdk replies) instead of busy-polling like Boa's default executor.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use boa_engine::job::{GenericJob, Job, JobExecutor, NativeAsyncJob, PromiseJob};
use boa_engine::{Context, JsResult};
use futures_concurrency::future::FutureGroup;
use futures_lite::StreamExt;

/// Runs promise and generic jobs to exhaustion, then awaits native async jobs.
#[derive(Default)]
pub struct Executor {
    promise_jobs: RefCell<VecDeque<PromiseJob>>,
    async_jobs: RefCell<VecDeque<NativeAsyncJob>>,
    generic_jobs: RefCell<VecDeque<GenericJob>>,
}

impl JobExecutor for Executor {
    fn enqueue_job(self: Rc<Self>, job: Job, _: &mut Context) {
        match job {
            Job::PromiseJob(j) => self.promise_jobs.borrow_mut().push_back(j),
            Job::AsyncJob(j) => self.async_jobs.borrow_mut().push_back(j),
            Job::GenericJob(j) => self.generic_jobs.borrow_mut().push_back(j),
            // No timers in the sandbox; FinalizationRegistry is removed from the realm.
            _ => {}
        }
    }

    fn run_jobs(self: Rc<Self>, ctx: &mut Context) -> JsResult<()> {
        futures_lite::future::block_on(self.run_jobs_async(&RefCell::new(ctx)))
    }

    async fn run_jobs_async(self: Rc<Self>, ctx: &RefCell<&mut Context>) -> JsResult<()> {
        let mut group = FutureGroup::new();
        loop {
            loop {
                let promise = std::mem::take(&mut *self.promise_jobs.borrow_mut());
                let generic = std::mem::take(&mut *self.generic_jobs.borrow_mut());
                if promise.is_empty() && generic.is_empty() {
                    break;
                }
                for job in promise {
                    job.call(&mut ctx.borrow_mut())?;
                }
                for job in generic {
                    job.call(&mut ctx.borrow_mut())?;
                }
            }
            ctx.borrow_mut().clear_kept_objects();
            for job in std::mem::take(&mut *self.async_jobs.borrow_mut()) {
                group.insert(job.call(ctx));
            }
            if group.is_empty() {
                return Ok(());
            }
            // A real await: the JS thread sleeps until a host reply arrives.
            if let Some(Err(e)) = group.next().await {
                return Err(e);
            }
        }
    }
}
