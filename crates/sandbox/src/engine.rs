//! Worker side: one execution in a fresh, hardened Boa realm.
//!
//! A [`Realm`] is built before its job arrives (so context creation is off the latency path),
//! used for exactly one execution, then dropped. Everything model code can reach is created
//! here: `console`, `utils`, and per kind `spec`, `sdk` or `vars`. Hardening is done natively
//! (a JS prelude walking the globals cost ~1 ms per realm): `eval`, `Function` and every
//! `.constructor` path to a function constructor are removed, as are shared memory and GC
//! observers, and the host globals are deep-frozen.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use boa_engine::builtins::promise::PromiseState;
use boa_engine::gc::{Gc, GcRefCell};
use boa_engine::job::JobExecutor;
use boa_engine::module::IdleModuleLoader;
use boa_engine::object::builtins::{JsFunction, JsPromise, JsProxy};
use boa_engine::object::{FunctionObjectBuilder, IntegrityLevel, ObjectInitializer};
use boa_engine::property::{Attribute, PropertyDescriptor, PropertyKey};
use boa_engine::{
    Context, JsArgs, JsError, JsNativeError, JsObject, JsResult, JsString, JsSymbol, JsValue,
    NativeFunction, Script, Source, js_string,
};
use serde_json::Value;
use serde_json::value::RawValue;

use super::executor::Executor;
use super::protocol::{FromWorker, JobKind};
use super::{ErrorKind, ExecError, Limit, Limits, LogEntry};

/// `spec.find` and helpers for search code.
const SEARCH_PRELUDE: &str = include_str!("../../../sandbox/search.js");

/// Source path given to model code, so its frames can be told from the prelude's.
const CODE_PATH: &str = "code";
/// Lines the wrapper adds before the model's first line.
const WRAPPER_LINES: u32 = 1;

/// The answer to an `sdk` call: its result as JSON text, or the error message.
pub type Reply = Result<Box<RawValue>, String>;

/// How a realm talks to the server: sends `call`s and receives replies.
pub trait Link: 'static {
    /// Sends one `sdk` call; the receiver yields the reply.
    fn call(
        &self,
        source: String,
        method: String,
        params: Value,
    ) -> futures::channel::oneshot::Receiver<Reply>;
    /// Blocks until a reply may have arrived: the job has nothing to do but wait for one.
    /// The default parks the thread until a waker unparks it.
    fn wait(&self) {
        std::thread::park();
    }
    /// Forgets calls still unanswered when a job ends (their receivers are gone).
    fn reset(&self);
}

/// What a worker knows for its whole life.
pub struct WorkerEnv {
    /// `{source: [method]}`.
    pub catalog: Rc<BTreeMap<String, Vec<String>>>,
    /// The public registry JSON with `utils` docs merged in, parsed once.
    pub spec: Value,
    /// Limits enforced inside the worker.
    pub limits: Limits,
    /// The server link.
    pub link: Rc<dyn Link>,
}

/// Per-execution state reachable from native functions via `Context::get_data`.
struct JobHost {
    link: Rc<dyn Link>,
    /// `{source: [method]}`, for the `sdk` sources built on first read.
    catalog: Rc<BTreeMap<String, Vec<String>>>,
    calls: Cell<u32>,
    max_calls: u32,
    calls_exceeded: Cell<bool>,
    logs: RefCell<LogBuffer>,
    /// Lines of the model's code: frames past it point into the wrapper and are dropped.
    code_lines: Cell<u32>,
}

#[derive(Default)]
struct LogBuffer {
    entries: Vec<LogEntry>,
    bytes: usize,
    cap: usize,
    dropped: usize,
}

impl LogBuffer {
    fn push(&mut self, level: &str, message: String) {
        if self.bytes + message.len() > self.cap {
            self.dropped += 1;
            return;
        }
        self.bytes += message.len();
        self.entries.push(LogEntry { level: level.to_owned(), message });
    }

    fn finish(mut self) -> Vec<LogEntry> {
        if self.dropped > 0 {
            self.entries.push(LogEntry {
                level: "warn".into(),
                message: format!(
                    "{} more console lines dropped (log limit {} bytes)",
                    self.dropped, self.cap
                ),
            });
        }
        self.entries
    }
}

/// A fresh context prepared for one job of `kind`.
pub struct Realm {
    kind: JobKind,
    ctx: Context,
    executor: Rc<Executor>,
    stringify: JsObject,
}

impl Realm {
    /// The kind this realm was prepared for.
    pub fn kind(&self) -> JobKind {
        self.kind
    }

    /// Installs the flag a watchdog sets at the job's deadline: the running code then stops
    /// with a [`Limit::Deadline`] error carrying the line it was at. A fresh flag per job, so
    /// a late store for the previous job cannot stop this one.
    pub fn set_interrupt(&mut self, flag: Arc<AtomicBool>) {
        self.ctx.set_interrupt_flag(Some(flag));
    }
}

/// Builds a hardened realm for `kind`: the globals that kind may see, frozen.
pub fn prepare(kind: JobKind, env: &WorkerEnv) -> JsResult<Realm> {
    let executor = Rc::new(Executor::default());
    let mut ctx = Context::builder()
        .job_executor(executor.clone())
        // Boa's default loader reads modules from the working directory: `import()` must fail.
        .module_loader(Rc::new(IdleModuleLoader))
        .build()?;
    let limits = ctx.runtime_limits_mut();
    limits.set_loop_iteration_limit(env.limits.loop_iterations);
    limits.set_recursion_limit(env.limits.recursion);
    limits.set_backtrace_limit(16);

    // Captured before any model code runs: results use the pristine `JSON.stringify`.
    let stringify = ctx
        .intrinsics()
        .objects()
        .json()
        .get(js_string!("stringify"), &mut ctx)?
        .as_object()
        .ok_or_else(|| JsNativeError::typ().with_message("JSON.stringify missing"))?
        .clone();

    ctx.insert_data(JobHost {
        link: env.link.clone(),
        catalog: env.catalog.clone(),
        calls: Cell::new(0),
        max_calls: env.limits.sdk_calls,
        calls_exceeded: Cell::new(false),
        logs: RefCell::new(LogBuffer { cap: env.limits.log_bytes, ..LogBuffer::default() }),
        code_lines: Cell::new(u32::MAX),
    });

    harden(&mut ctx)?;
    super::polyfills::install(&mut ctx)?;
    super::intl::install(&mut ctx)?;
    let console = ObjectInitializer::new(&mut ctx)
        .function(NativeFunction::from_fn_ptr(console_log), js_string!("log"), 0)
        .function(NativeFunction::from_fn_ptr(console_log), js_string!("info"), 0)
        .function(NativeFunction::from_fn_ptr(console_warn), js_string!("warn"), 0)
        .function(NativeFunction::from_fn_ptr(console_error), js_string!("error"), 0)
        .build();
    define_frozen_global(&mut ctx, "console", console.into())?;
    let utils = super::utils::install(&mut ctx)?;
    define_frozen_global(&mut ctx, "utils", utils.into())?;

    match kind {
        JobKind::Search => {
            let spec = JsValue::from_json(&env.spec, &mut ctx)?;
            define_global(&mut ctx, "spec", spec.clone())?;
            // Adds `spec.find` and `spec.methods` before the freeze.
            ctx.eval(Source::from_bytes(SEARCH_PRELUDE).with_path(Path::new("search.js")))?;
            freeze_deep(&spec, &mut ctx)?;
        }
        JobKind::Panel => {
            let sdk = build_sdk(&mut ctx, &env.catalog)?;
            define_frozen_global(&mut ctx, "sdk", sdk.into())?;
        }
        JobKind::Builder | JobKind::Check => {}
    }
    Ok(Realm { kind, ctx, executor, stringify })
}

/// No code from strings: removes `eval` and `Function`, makes every `.constructor` path to a
/// function constructor (plain, async, generator, async generator) `undefined`, and removes
/// shared memory and GC observers.
fn harden(ctx: &mut Context) -> JsResult<()> {
    let ctors = ctx.intrinsics().constructors();
    let protos = [
        ctors.function().prototype(),
        ctors.async_function().prototype(),
        ctors.generator_function().prototype(),
        ctors.async_generator_function().prototype(),
    ];
    for proto in protos {
        let gone = PropertyDescriptor::builder()
            .value(JsValue::undefined())
            .writable(false)
            .enumerable(false)
            .configurable(false);
        proto.define_property_or_throw(js_string!("constructor"), gone, ctx)?;
    }
    let global = ctx.global_object();
    for name in
        ["eval", "Function", "SharedArrayBuffer", "Atomics", "WeakRef", "FinalizationRegistry"]
    {
        global.delete_property_or_throw(JsString::from(name), ctx)?;
    }
    Ok(())
}

/// Freezes a graph of host objects. An object already non-extensible has been visited, which
/// also ends cycles such as `f.prototype.constructor === f`.
fn freeze_deep(root: &JsValue, ctx: &mut Context) -> JsResult<()> {
    let mut stack: Vec<JsObject> = root.as_object().into_iter().collect();
    while let Some(obj) = stack.pop() {
        if !obj.is_extensible(ctx)? {
            continue;
        }
        obj.set_integrity_level(IntegrityLevel::Frozen, ctx)?;
        for key in obj.own_property_keys(ctx)? {
            if let Some(child) = obj.get(key, ctx)?.as_object() {
                stack.push(child.clone());
            }
        }
    }
    Ok(())
}

fn define_frozen_global(ctx: &mut Context, name: &str, value: JsValue) -> JsResult<()> {
    freeze_deep(&value, ctx)?;
    define_global(ctx, name, value)
}

/// Defines a non-writable, non-configurable global.
fn define_global(ctx: &mut Context, name: &str, value: JsValue) -> JsResult<()> {
    ctx.register_global_property(JsString::from(name), value, Attribute::READONLY)
}

/// `sdk.<source>.<method>(params) -> Promise`, one native function per catalog entry. The
/// objects are frozen and wrapped by [`strict`], so a misspelt name throws a hint.
///
/// Every property is created non-writable and non-configurable (methods non-enumerable, as
/// `function` members are), which is what freezing would leave, so [`strict`] only has to stop
/// extensions: freezing ~40 objects property by property was a third of this function's cost.
/// A source is an accessor that builds its object on first read and returns that same object
/// after: a panel reads one or two of ~40 sources, and building all of them was ~40% of a
/// panel realm's creation.
fn build_sdk(ctx: &mut Context, catalog: &BTreeMap<String, Vec<String>>) -> JsResult<JsObject> {
    let getters: Vec<(JsString, JsFunction)> = catalog
        .keys()
        .map(|source| {
            let name = JsString::from(source.as_str());
            let built: Gc<GcRefCell<Option<JsObject>>> = Gc::new(GcRefCell::new(None));
            let get =
                NativeFunction::from_copy_closure_with_captures(sdk_source, (name.clone(), built));
            let get = FunctionObjectBuilder::new(ctx.realm(), get)
                .name(JsString::from(format!("get {source}").as_str()))
                .length(0)
                .constructor(false)
                .build();
            (name, get)
        })
        .collect();
    let mut sdk = ObjectInitializer::new(ctx);
    for (name, get) in getters {
        sdk.accessor(name, Some(get), None, Attribute::ENUMERABLE);
    }
    sdk.property(JsSymbol::to_string_tag(), js_string!("sdk"), Attribute::empty());
    let sdk = sdk.build();
    strict(sdk, ctx)
}

/// The getter of `sdk.<source>`: the source's (strict, frozen) object, built on first read.
fn sdk_source(
    _this: &JsValue,
    _args: &[JsValue],
    (name, built): &(JsString, Gc<GcRefCell<Option<JsObject>>>),
    ctx: &mut Context,
) -> JsResult<JsValue> {
    if let Some(obj) = built.borrow().as_ref() {
        return Ok(obj.clone().into());
    }
    let source = name.to_std_string_escaped();
    let catalog = ctx.get_data::<JobHost>().map(|h| h.catalog.clone());
    let methods = catalog.as_ref().and_then(|c| c.get(&source)).map_or(&[][..], Vec::as_slice);
    let obj = build_source(ctx, name, &source, methods)?;
    *built.borrow_mut() = Some(obj.clone());
    Ok(obj.into())
}

/// One source's object: its methods, frozen behind [`strict`].
fn build_source(
    ctx: &mut Context,
    source_name: &JsString,
    source: &str,
    methods: &[String],
) -> JsResult<JsObject> {
    let functions: Vec<(JsString, JsFunction)> = methods
        .iter()
        .map(|method| {
            let name = JsString::from(method.as_str());
            let names = (source_name.clone(), name.clone());
            let f = NativeFunction::from_copy_closure_with_captures(sdk_method, names);
            let f = FunctionObjectBuilder::new(ctx.realm(), f)
                .name(name.clone())
                .length(1)
                .constructor(false)
                .build();
            (name, f)
        })
        .collect();
    let mut obj = ObjectInitializer::new(ctx);
    for (name, f) in functions {
        obj.property(name, f, Attribute::empty());
    }
    // The proxy's hint reads which object it guards from here.
    let tag = JsString::from(format!("sdk.{source}").as_str());
    obj.property(JsSymbol::to_string_tag(), tag, Attribute::empty());
    let obj = obj.build();
    strict(obj, ctx)
}

/// Names a missing name is read by without being used as data: promise resolution and
/// `JSON.stringify` probe them, so they must stay `undefined`.
const PROBED: [&str; 2] = ["then", "toJSON"];

/// Freezes `target`, whose properties are already non-writable and non-configurable, and wraps
/// it in a proxy whose `get` throws for a name it does not have (`sdk.markt` → "unknown source
/// `markt` in sdk; did you mean `market`?") instead of giving `undefined`, which code would
/// turn into a bare "cannot convert undefined to object".
fn strict(target: JsObject, ctx: &mut Context) -> JsResult<JsObject> {
    target.prevent_extensions(ctx)?;
    debug_assert!(target.test_integrity_level(IntegrityLevel::Frozen, ctx)?);
    Ok(JsProxy::builder(target).get(strict_get).build(ctx)?.into())
}

fn strict_get(_this: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let target = args
        .get_or_undefined(0)
        .as_object()
        .ok_or_else(|| JsNativeError::typ().with_message("sdk proxy without a target"))?;
    let key = args.get_or_undefined(1).to_property_key(ctx)?;
    let PropertyKey::String(name) = &key else { return target.get(key, ctx) };
    let name = name.to_std_string_escaped();
    if target.has_property(key.clone(), ctx)? || PROBED.contains(&name.as_str()) {
        return target.get(key, ctx);
    }
    let tag = target.get(JsSymbol::to_string_tag(), ctx)?.to_string(ctx)?.to_std_string_escaped();
    let mut names = Vec::new();
    for k in target.own_property_keys(ctx)? {
        if let PropertyKey::String(s) = k {
            names.push(s.to_std_string_escaped());
        }
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let hint = match base::text::closest(&name, &names).as_slice() {
        [] => format!("; it has: {}", base::text::clip(&names.join(", "), 300)),
        [one] => format!("; did you mean `{one}`?"),
        many => format!("; did you mean one of: {}?", many.join(", ")),
    };
    let what = if tag == "sdk" { "source" } else { "method" };
    Err(JsNativeError::typ().with_message(format!("unknown {what} `{name}` in {tag}{hint}")).into())
}

fn sdk_method(
    _this: &JsValue,
    args: &[JsValue],
    names: &(JsString, JsString),
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let source = names.0.to_std_string_escaped();
    let method = names.1.to_std_string_escaped();
    // `to_json` reads own data properties only: no model getters or proxy traps run here.
    let params = args.get_or_undefined(0).to_json(ctx)?.unwrap_or(Value::Null);
    let host = ctx
        .get_data::<JobHost>()
        .ok_or_else(|| JsNativeError::error().with_message("sdk is not available here"))?;
    let n = host.calls.get() + 1;
    host.calls.set(n);
    if n > host.max_calls {
        host.calls_exceeded.set(true);
        return Err(JsNativeError::range()
            .with_message(format!(
                "sdk call limit reached: at most {} sdk calls per execution",
                host.max_calls
            ))
            .into());
    }
    let reply = host.link.call(source, method, params);
    Ok(JsPromise::from_async_fn(
        async move |ctx| match reply.await {
            Ok(Ok(v)) => super::json_in::parse(v.get(), &mut ctx.borrow_mut()).map_err(|e| {
                JsNativeError::error().with_message(format!("sdk reply is not JSON: {e}")).into()
            }),
            Ok(Err(msg)) => Err(sdk_error(msg, &mut ctx.borrow_mut())),
            Err(_) => Err(JsNativeError::error().with_message("sdk call cancelled").into()),
        },
        ctx,
    )
    .into())
}

/// An `Error` named `SdkError`, so code can tell data failures apart (`e.name`).
fn sdk_error(msg: String, ctx: &mut Context) -> JsError {
    let obj = JsNativeError::error().with_message(msg).into_opaque(ctx);
    if let Err(e) = obj.set(js_string!("name"), js_string!("SdkError"), false, ctx) {
        return e;
    }
    JsError::from_opaque(obj.into())
}

fn console_log(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    log(ctx, "log", args)
}
fn console_warn(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    log(ctx, "warn", args)
}
fn console_error(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    log(ctx, "error", args)
}

fn log(ctx: &mut Context, level: &str, args: &[JsValue]) -> JsResult<JsValue> {
    let mut parts = Vec::with_capacity(args.len());
    for a in args {
        parts.push(match a.as_string() {
            Some(s) => s.to_std_string_escaped(),
            // Objects are shown as JSON without running model getters; fall back to display.
            None if a.is_object() => match a.to_json(ctx) {
                Ok(Some(v)) => v.to_string(),
                _ => a.display().to_string(),
            },
            None => a.display().to_string(),
        });
    }
    if let Some(host) = ctx.get_data::<JobHost>() {
        host.logs.borrow_mut().push(level, parts.join(" "));
    }
    Ok(JsValue::undefined())
}

/// Runs `code` in `realm` and returns the message to send back (`done` or `fail`).
///
/// Takes the realm by reference so the caller can drop it (and its garbage) after replying.
pub fn run(realm: &mut Realm, code: &str, input: Value, limits: &Limits) -> FromWorker {
    let Realm { kind, ctx, executor, stringify } = realm;
    if let Some(host) = ctx.get_data::<JobHost>() {
        host.code_lines.set(u32::try_from(code.lines().count()).unwrap_or(u32::MAX).max(1));
    }
    let link = ctx.get_data::<JobHost>().map(|h| h.link.clone());
    let job = execute(*kind, ctx, executor, code, input);
    let outcome = match link {
        Some(link) => block_on(job, link.as_ref()),
        None => futures_lite::future::block_on(job),
    };
    let host = ctx.get_data::<JobHost>();
    let sdk_calls = host.map_or(0, |h| h.calls.get().min(h.max_calls));
    let exceeded = host.is_some_and(|h| h.calls_exceeded.get());
    let logs = host.map(|h| h.logs.replace(LogBuffer::default()).finish()).unwrap_or_default();
    let fail = |mut error: ExecError, logs| {
        error.logs = logs;
        FromWorker::Fail { error, retire: false }
    };
    if exceeded {
        let msg = format!(
            "too many sdk calls: at most {} per execution; batch requests or raise the limit",
            limits.sdk_calls
        );
        return fail(ExecError::limit(Limit::SdkCalls, msg), logs);
    }
    let value = match outcome {
        Ok(v) => v,
        Err(mut e) => {
            if e.limit == Some(Limit::Deadline) {
                let ms = limits.deadline(*kind).as_millis();
                e.message = format!("execution exceeded its {ms} ms deadline and was stopped");
            }
            return fail(e, logs);
        }
    };
    match to_json_text(&value, stringify, ctx, limits.result_bytes) {
        Ok(text) => match RawValue::from_string(text) {
            Ok(value) => FromWorker::Done { value, logs, sdk_calls, retire: false },
            Err(e) => fail(ExecError::new(ErrorKind::Result, format!("result: {e}")), logs),
        },
        Err(e) => fail(e, logs),
    }
}

/// Polls `job` to completion on this thread; while it waits, `link` waits for a reply (the
/// worker reads it from its pipe on this same thread).
fn block_on<F: Future>(job: F, link: &dyn Link) -> F::Output {
    struct Flag {
        thread: std::thread::Thread,
        woken: AtomicBool,
    }
    impl std::task::Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.woken.store(true, Ordering::Release);
            self.thread.unpark();
        }
    }
    let flag = Arc::new(Flag { thread: std::thread::current(), woken: AtomicBool::new(false) });
    let waker = std::task::Waker::from(flag.clone());
    let mut cx = std::task::Context::from_waker(&waker);
    let mut job = std::pin::pin!(job);
    loop {
        if let std::task::Poll::Ready(out) = job.as_mut().poll(&mut cx) {
            return out;
        }
        while !flag.woken.swap(false, Ordering::Acquire) {
            link.wait();
        }
    }
}

async fn execute(
    kind: JobKind,
    ctx: &mut Context,
    executor: &Rc<Executor>,
    code: &str,
    input: Value,
) -> Result<JsValue, ExecError> {
    if kind == JobKind::Check {
        parse(ctx, &format!("(async () => {{\n{code}\n}})"))?;
        return Ok(JsValue::null());
    }
    let promise = match (kind, &input) {
        (JobKind::Builder, Value::Object(_)) => {
            let f = compile_mutator(ctx, code)?;
            let state = JsValue::from_json(&input, ctx).map_err(|e| map_error(e, ctx))?;
            let r = f.call(&JsValue::undefined(), &[state], ctx).map_err(|e| map_error(e, ctx))?;
            JsPromise::resolve(r, ctx).map_err(|e| map_error(e, ctx))?
        }
        _ => {
            if kind == JobKind::Panel {
                let vars = JsValue::from_json(&input, ctx).map_err(|e| map_error(e, ctx))?;
                define_frozen_global(ctx, "vars", vars).map_err(|e| map_error(e, ctx))?;
            }
            let src = format!("(async () => {{\n{code}\n}})()");
            let v = eval_code(ctx, &src)?;
            let obj = v.as_object().ok_or_else(|| internal("wrapper did not return a promise"))?;
            JsPromise::from_object(obj.clone()).map_err(|e| map_error(e, ctx))?
        }
    };
    executor.clone().run_jobs_async(&RefCell::new(ctx)).await.map_err(|e| map_error(e, ctx))?;
    match promise.state() {
        PromiseState::Fulfilled(v) => Ok(v),
        PromiseState::Rejected(e) => Err(map_error(JsError::from_opaque(e), ctx)),
        PromiseState::Pending => Err(ExecError::new(
            ErrorKind::Runtime,
            "never settled: the code's promise was still pending when no work was left, so a \
             promise is never resolved (e.g. `await new Promise(() => {})`)",
        )),
    }
}

/// Mutate code is `async (state) => newState`. A bare function body using `state` is accepted
/// too, since models write both.
fn compile_mutator(ctx: &mut Context, code: &str) -> Result<JsObject, ExecError> {
    let trimmed = code.trim_end().trim_end_matches(';');
    let as_expr = format!("(\n{trimmed}\n)");
    let value = match parse(ctx, &as_expr) {
        Ok(script) => script.evaluate(ctx).map_err(|e| map_error(e, ctx))?,
        Err(expr_err) => match parse(ctx, &format!("(async (state) => {{\n{code}\n}})")) {
            Ok(script) => script.evaluate(ctx).map_err(|e| map_error(e, ctx))?,
            Err(_) => return Err(expr_err),
        },
    };
    match value.as_object() {
        Some(f) if f.is_callable() => Ok(f.clone()),
        _ => Err(ExecError::new(
            ErrorKind::Runtime,
            format!(
                "mutate code must be a function `async (state) => newState`, got {}",
                value.type_of()
            ),
        )),
    }
}

fn parse(ctx: &mut Context, src: &str) -> Result<Script, ExecError> {
    Script::parse(Source::from_bytes(src).with_path(Path::new(CODE_PATH)), None, ctx)
        .map_err(|e| syntax_error(&e.to_string()))
}

fn eval_code(ctx: &mut Context, src: &str) -> Result<JsValue, ExecError> {
    let script = parse(ctx, src)?;
    script.evaluate(ctx).map_err(|e| map_error(e, ctx))
}

fn internal(msg: &str) -> ExecError {
    ExecError::new(ErrorKind::Runtime, format!("internal sandbox error: {msg}"))
}

/// Parser errors read like `SyntaxError: abrupt end at line 3, col 7`; positions are shifted
/// back by the wrapper's lines.
fn syntax_error(display: &str) -> ExecError {
    let mut err = ExecError::new(ErrorKind::Syntax, display.to_owned());
    if let Some((line, col)) = find_line_col(display) {
        let line = line.saturating_sub(WRAPPER_LINES).max(1);
        err.line = Some(line);
        err.column = Some(col);
        err.message = replace_line_col(display, line, col);
    }
    if !err.message.starts_with("SyntaxError") {
        err.message = format!("SyntaxError: {}", err.message);
    }
    err
}

/// Finds the last "line N, col M" in a parser message.
fn find_line_col(s: &str) -> Option<(u32, u32)> {
    let at = s.rfind("line ")?;
    let rest = &s[at + 5..];
    let (line, rest) = rest.split_once(", col")?;
    let col: String = rest
        .trim_start_matches(['u', 'm', 'n', ' '])
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((line.trim().parse().ok()?, col.parse().ok()?))
}

fn replace_line_col(s: &str, line: u32, col: u32) -> String {
    match s.rfind("line ") {
        Some(at) => format!("{}line {line}, column {col}", &s[..at]),
        None => s.to_owned(),
    }
}

/// Maps any JS error to an [`ExecError`]: engine limits by kind, thrown values by their
/// `name: message`, and the innermost frame of model code as the position.
fn map_error(err: JsError, ctx: &mut Context) -> ExecError {
    if let Some(engine) = err.as_engine() {
        let text = engine.to_string();
        let limit = if text.contains("iteration loops") {
            Some((
                Limit::LoopIterations,
                "loop iteration limit reached (a loop ran too long; per function call)",
            ))
        } else if text.contains("recursive calls") {
            Some((Limit::Recursion, "recursion limit reached (call depth)"))
        } else if text.contains("stack size") {
            Some((Limit::Stack, "stack size limit reached"))
        } else if text.contains("interrupted by the host") {
            // The worker's watchdog: `run` names the deadline.
            Some((Limit::Deadline, "execution exceeded its deadline and was stopped"))
        } else {
            None
        };
        let mut e = match limit {
            Some((l, msg)) => ExecError::limit(l, msg),
            None => ExecError::new(ErrorKind::Runtime, text),
        };
        attach_frames(&mut e, &err.to_string(), code_lines(ctx));
        return e;
    }
    let display = err.to_string();
    let (kind, message) = match err.as_opaque() {
        Some(v) => describe_thrown(v, ctx),
        None => (ErrorKind::Runtime, display.lines().next().unwrap_or_default().to_owned()),
    };
    // Boa reports a failed buffer allocation (the worker's memory cap) as a RangeError.
    let mut e = if message.contains("while allocating data block") {
        ExecError::limit(
            Limit::Memory,
            format!(
                "out of memory: an allocation failed under the worker's memory limit ({message})"
            ),
        )
    } else {
        ExecError::new(kind, message)
    };
    attach_frames(&mut e, &display, code_lines(ctx));
    e
}

fn code_lines(ctx: &Context) -> u32 {
    ctx.get_data::<JobHost>().map_or(u32::MAX, |h| h.code_lines.get())
}

/// `name: message` of a thrown value; plain values are shown as `Uncaught <value>`.
fn describe_thrown(v: &JsValue, ctx: &mut Context) -> (ErrorKind, String) {
    let Some(obj) = v.as_object() else {
        let shown = match v.as_string() {
            Some(s) => format!("{:?}", s.to_std_string_escaped()),
            None => v.display().to_string(),
        };
        return (ErrorKind::Runtime, format!("Uncaught {shown}"));
    };
    let mut get = |k: JsString| -> Option<String> {
        let v = obj.get(k, ctx).ok()?;
        v.as_string().map(|s| s.to_std_string_escaped())
    };
    let name = get(js_string!("name"));
    let message = get(js_string!("message"));
    match (name, message) {
        (Some(n), Some(m)) => {
            let kind = if n == "SdkError" { ErrorKind::Sdk } else { ErrorKind::Runtime };
            let text = if m.is_empty() { n } else { format!("{n}: {m}") };
            (kind, text)
        }
        _ => (ErrorKind::Runtime, format!("Uncaught {}", v.display())),
    }
}

/// Fills line/column (innermost model frame) and a short stack from a displayed JsError.
fn attach_frames(e: &mut ExecError, display: &str, code_lines: u32) {
    let marker = format!("({CODE_PATH}:");
    for frame in display.lines().filter_map(|l| l.trim().strip_prefix("at ")) {
        let Some(at) = frame.find(&marker) else { continue };
        let pos = &frame[at + marker.len()..].trim_end_matches(')');
        let Some((l, c)) = pos.split_once(':') else { continue };
        let (Ok(l), Ok(c)) = (l.parse::<u32>(), c.parse::<u32>()) else { continue };
        if l <= WRAPPER_LINES || l - WRAPPER_LINES > code_lines {
            continue;
        }
        let line = l - WRAPPER_LINES;
        let name = frame[..at].trim();
        let name = if name.is_empty() || name == "<main>" { "<anonymous>" } else { name };
        e.stack.push(format!("{name} (line {line}, column {c})"));
        if e.line.is_none() {
            e.line = Some(line);
            e.column = Some(c);
        }
    }
    e.stack.truncate(8);
}

/// `JSON.stringify` (pristine) of the result, with the size cap.
fn to_json_text(
    value: &JsValue,
    stringify: &JsObject,
    ctx: &mut Context,
    cap: usize,
) -> Result<String, ExecError> {
    match super::json_out::stringify(value, cap, ctx) {
        super::json_out::Fast::Text(text) => return Ok(text),
        super::json_out::Fast::Undefined => return Ok("null".to_owned()),
        super::json_out::Fast::TooLarge(size) => return Err(result_too_large(size, cap)),
        super::json_out::Fast::Bail => {}
    }
    let out =
        stringify.call(&JsValue::undefined(), std::slice::from_ref(value), ctx).map_err(|e| {
            let mut err = map_error(e, ctx);
            if err.kind == ErrorKind::Runtime {
                err.kind = ErrorKind::Result;
                err.message = format!("the result cannot be converted to JSON: {}", err.message);
            }
            err
        })?;
    let Some(s) = out.as_string() else {
        // `undefined`, a function or a symbol: JSON.stringify gives undefined.
        return Ok("null".to_owned());
    };
    // UTF-16 length is a lower bound on the UTF-8 size: refuse early without converting.
    if s.len() > cap {
        return Err(result_too_large(s.len(), cap));
    }
    let text = s.to_std_string_escaped();
    if text.len() > cap {
        return Err(result_too_large(text.len(), cap));
    }
    Ok(text)
}

fn result_too_large(size: usize, cap: usize) -> ExecError {
    ExecError::limit(
        Limit::ResultSize,
        format!(
            "result too large: {size} bytes as JSON (limit {cap}); return fewer rows or aggregate"
        ),
    )
}
