package io.github.resilienthttp.internal.engine;

import io.github.resilienthttp.HedgingPolicy;
import io.github.resilienthttp.IdempotencyKeyPolicy;
import io.github.resilienthttp.Operation;
import io.github.resilienthttp.OperationOptions;
import io.github.resilienthttp.ResilientHttpException;
import io.github.resilienthttp.ResponseClassifier;
import io.github.resilienthttp.RetryPolicy;
import io.github.resilienthttp.internal.util.Floors;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.UnaryOperator;
import okhttp3.Call;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The one owner of an operation while it runs: its own attempts (picking the blocking, async or
 * hedging driver), the feature steps above them ({@link Steps}: the 202 wait, the outcome query),
 * the outbox exit, ONE deadline and ONE cancel signal for all of them. {@link #cancelRun()} is the
 * one cancel target: it forwards to whatever runs now (the attempts' call or driver, a poll, a query, a
 * re-send, a scheduled wait). The same steps run under two small drivers: {@link #execute()} on the
 * caller's thread, sleeping through the client's {@code TimeSource}; {@link #executeAsync()}
 * without holding a thread (operations through {@code executeAsync()}, waits on the client's
 * scheduler).
 *
 * <p>A run is its own attempts' state: it extends {@link RetryLoop} (which extends
 * {@link Failures} and {@link Execution}), so an operation is one engine object, whose parts each
 * keep one idea in their own class. A plain call's operation is a run that is never started: its
 * attempts are driven by {@code RetryInterceptor} ({@link #forPlainCall}).
 *
 * <p>A run is made before it starts (a cancel may come first: the run then starts cancelled), and
 * {@linkplain #start started} once. Its outcome is a compare-and-set: running, then cancelled or
 * returned, whichever comes first; a cancel after the final response was handed over does nothing.
 * Thread-safe. Not API.
 */
public final class Run extends RetryLoop implements BlockingDriver.Attempts {
  private static final int RUNNING = 0;
  private static final int CANCELED = 1;
  private static final int RETURNED = 2;
  private static final VarHandle STATE;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      STATE = lookup.findVarHandle(Run.class, "state", int.class);
      PHASE = lookup.findVarHandle(Run.class, "phase", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private volatile int state;
  /** {@link #NEW}, then {@link #CLAIMED} (being defined), then {@link #STARTED}. */
  private volatile int phase;
  private static final int NEW = 0;
  private static final int CLAIMED = 1;
  private static final int STARTED = 2;
  private static final VarHandle PHASE;
  /**
   * What runs now: the attempts' {@link AsyncDriver} or {@link HedgingDriver}, a step's
   * {@link Operation}, a non-blocking run waiting on the scheduler ({@link Chain}), or the future a
   * blocking wait sleeps on; {@code null} while the blocking driver's attempts run (their call is
   * the {@linkplain #watchedCall() watched} one). Replaced by each step, so a finished step's state
   * is not kept while the run waits.
   */
  private volatile Object current;
  /**
   * Whether the run's own attempts may still be cancelled: set by define(), cleared when they
   * ended (a run with steps goes on). A plain field read by a cancel or a close on another thread:
   * a stale {@code true} only calls the attempts' cancel, which does nothing once their outcome is
   * settled ({@link Execution#cancel()}).
   */
  private boolean ownAttempts;
  // Written by start(), before the release write of `phase`; read by the driver after it, and by
  // stop() after it read the phase.
  private HedgingPolicy hedging;
  /** The features above the attempts, or {@code null} for a run of attempts alone. */
  private Features features;

  /**
   * What a run does above its attempts, made only for a run that has it (a healthy call's run
   * carries one field for all of it).
   */
  private static final class Features {
    /** The feature around the attempts (the 202 wait, the outcome query), as steps. */
    final Steps steps;
    /** The outcome query under the 202 wait, or {@code null}. */
    final Steps inner;
    /** What a failure of the whole run becomes (the outbox exit), or {@code null}. */
    final UnaryOperator<IOException> exit;
    /** The future {@link #executeAsync()} returned: a cancel completes it. */
    volatile OperationFuture future;

    Features(Steps steps, Steps inner, UnaryOperator<IOException> exit) {
      this.steps = steps;
      this.inner = inner;
      this.exit = exit;
    }
  }

  /**
   * A run of {@code runtime}'s client, not started.
   *
   * @param runtime the client's runtime
   */
  public Run(ClientRuntime runtime) {
    super(runtime);
  }

  /**
   * The operation of a plain OkHttp call on {@code ResilientHttpClient.okHttpClient()}, with the
   * settings of its {@link OperationOptions} tag if any: a run that is never started, whose
   * attempts {@code RetryInterceptor} drives. A key header the caller already put on the request is
   * kept exactly as it is.
   */
  public static Run forPlainCall(ClientRuntime client, Request request) {
    Run run = new Run(client);
    run.plain();
    OperationOptions options = request.tag(OperationOptions.class);
    if (options != null && options.isPassThrough()) {
      run.define(request, null, false, null, true, null, null);
      return run;
    }
    IdempotencyKeyPolicy policy = client.idempotencyKeyPolicy();
    String header = policy.keyFromHeader(request.header(policy.headerName()));
    String callerKey = options == null ? null : options.idempotencyKey();
    if (header != null && callerKey != null && !header.equals(callerKey)) {
      throw new IllegalArgumentException("the request carries " + policy.headerName()
          + " and an OperationOptions key that differ");
    }
    String key = header != null ? IdempotencyKeyPolicy.validateKey(header) : callerKey;
    boolean keySent = KeyDecision.keySent(header != null,
        options == null ? null : options.sendIdempotencyKey(), callerKey != null, policy,
        request.method());
    run.define(request, key, keySent,
        options == null ? null : options.deadline(), false, null, null);
    return run;
  }

  /**
   * Fixes what the operation is, before {@link #start}: the request (stamped here with the key,
   * once, so that every attempt carries the same key), the key ({@code null}: made on first use),
   * the deadline from now and the retry policy and classifier ({@code null}: the policy's and the
   * client's).
   */
  public void define(Request request, String key, boolean keySent, Duration deadline,
      RetryPolicy retryPolicy, ResponseClassifier classifier) {
    define(request, key, keySent, deadline, false, retryPolicy, classifier);
    this.ownAttempts = true;
  }

  /**
   * Whether {@code policy} hedges this operation: never a body that may be sent only once, which
   * two copies would send at the same time. After {@link #define}.
   *
   * @return whether the run is hedged
   */
  public boolean hedges(HedgingPolicy policy) {
    return policy != null && policy.hedges(method(), keySent())
        && !RetryLoop.sentOnce(request(), retryPolicy());
  }

  /**
   * Starts the run of the operation's attempts ({@link #define}d before), under its deadline.
   *
   * @param hedging the hedging that applies, or {@code null} (see {@link #hedges})
   * @param steps the feature around the attempts (the 202 wait), or {@code null}
   * @param query the outcome query that settles the attempts' unknown outcome, or {@code null}
   * @param exit what a failure of the whole run becomes (the outbox exit), or {@code null}
   * @throws IllegalStateException when already started
   */
  public void start(HedgingPolicy hedging, Steps steps, Steps query,
      UnaryOperator<IOException> exit) {
    this.hedging = hedging;
    Steps outer = steps != null ? steps : query != null ? query
        : exit != null ? new AttemptsOnly(this) : null;
    this.features = outer == null ? null
        : new Features(outer, steps != null ? query : null, exit);
    markStarted();
  }

  /**
   * Starts a run of {@code steps} alone (a wait resumed from a token), under {@code deadline}.
   *
   * @param deadline the run's deadline, from now
   * @param steps the steps; their {@link Step#ATTEMPTS} is not allowed
   * @throws IllegalStateException when already started
   */
  public void start(Duration deadline, Steps steps) {
    if (!claim()) {
      throw new IllegalStateException("a run starts once");
    }
    this.features = new Features(steps, null, null);
    defineDeadline(deadline.toNanos());
    markStarted();
  }

  /**
   * Claims the run for its one start, before it is {@link #define}d: of two callers, one wins.
   *
   * @return whether this caller claimed it; {@code false} when it was claimed before
   */
  public boolean claim() {
    return PHASE.compareAndSet(this, NEW, CLAIMED);
  }

  /**
   * Whether the run was claimed for its start ({@link #claim()}): its settings can no longer
   * change.
   *
   * @return whether the run was claimed
   */
  public boolean isClaimed() {
    return phase != NEW;
  }

  /**
   * The claimed run is defined and starts now: publishes what {@link #define} and {@link #start}
   * wrote. A cancel before this cancels the attempts itself ({@link #stop}), so no check follows.
   */
  private void markStarted() {
    if (phase != CLAIMED) {
      throw new IllegalStateException("a run starts once, after claim()");
    }
    PHASE.setRelease(this, STARTED);
  }

  /**
   * Whether the run stays registered with the client's lifecycle while it runs: with steps (their
   * waits and sub-operations) or hedges (their timers and copies). A plain run registers only while
   * it waits.
   */
  @Override
  boolean registeredForLife() {
    return features != null || hedging != null;
  }

  /**
   * Whether the run was started.
   *
   * @return whether {@link #start} was called
   */
  public boolean isStarted() {
    return phase == STARTED;
  }

  /**
   * Whether {@link #cancelRun()} or a close reached the run before it returned: what a run with
   * steps asks between them. A run of attempts alone never marks its return here (its attempts'
   * outcome, {@link Execution#isCanceled()}, does), so a cancel after its return still sets this,
   * harmlessly.
   *
   * @return whether the run was cancelled
   */
  public boolean isRunCanceled() {
    return state == CANCELED;
  }

  /**
   * Cancels the run, unless its response was returned: the attempts' call in flight, a scheduled
   * retry, a bulkhead wait, every hedged copy, and the step that runs now (a poll, a query, a
   * re-send, a wait). A run not started yet starts cancelled. Once; thread-safe. (Its attempts'
   * own cancel is {@link Execution#cancel()}.)
   */
  public void cancelRun() {
    stop(false);
  }

  /**
   * The client closes: {@code now}, as {@link #cancelRun()} but the operation fails with the
   * close's failure; otherwise the attempt in flight goes on, and a wait (between attempts, for a
   * bulkhead permit, between polls) wakes, so the run ends at once ({@code RetryLoop} and the steps
   * start nothing on a closed client).
   */
  @Override
  public void clientClosing(boolean now) {
    if (now) {
      closeNow();
      return;
    }
    if (ownAttempts || plainCall() != null) {
      cancelSignal().complete(null); // wakes a blocking backoff or bulkhead wait
    }
    Object c = current;
    if (c instanceof AsyncDriver a) {
      a.wake();
    } else if (c instanceof Chain wait) {
      wait.cutShort();
    } else if (c instanceof CompletableFuture<?> blockingWait) {
      blockingWait.complete(null);
    }
  }

  /**
   * The client closes now: as {@link #cancelRun()}, but the operation fails with the close's
   * failure. A plain call's operation cancels its one OkHttp call, unless its response was
   * returned.
   */
  @Override
  public void closeNow() {
    Call plainCall = plainCall();
    if (plainCall != null) {
      if (cancel()) {
        plainCall.cancel();
      }
      return;
    }
    stop(true);
  }

  private boolean closed() {
    return runtime().lifecycle().isClosed();
  }

  private void stop(boolean forClose) {
    if (!STATE.compareAndSet(this, RUNNING, CANCELED)) {
      return; // returned (the caller may be reading the body), or cancelled before
    }
    // The phase is read first: once started, what define() and start() wrote (ownAttempts,
    // features) is visible here.
    boolean started = isStarted();
    Features on = features;
    OperationFuture f = on == null ? null : on.future;
    if (f != null && !forClose) {
      f.cancelFromOperation(); // a close fails the future instead, through the steps: client-closed
    }
    // A run not started yet cancels its attempts before they exist (they start cancelled); a
    // started one only while they are its own.
    boolean attemptsCanceled = (!started || ownAttempts) && cancel();
    Object c = current;
    if (c instanceof Operation step) {
      step.cancel();
    } else if (c instanceof Chain wait) {
      wait.cutShort();
    } else if (c instanceof CompletableFuture<?> blockingWait) {
      blockingWait.complete(null);
    } else if (attemptsCanceled) {
      // The attempts' own parts, only while their response is not returned.
      if (c instanceof AsyncDriver a) {
        a.stop(forClose);
      } else if (c instanceof HedgingDriver h) {
        h.stop(forClose);
      } else {
        // The blocking driver's attempt: its call is the watched one (see send()).
        Call call = watchedCall();
        if (call != null) {
          call.cancel();
        }
      }
    }
  }

  // ---------------------------------------------------------------- the blocking driver

  /**
   * Runs to the end on the calling thread; see {@code Operation.execute()}.
   *
   * @return the final response, which the caller must close
   * @throws IOException the run's failure (after the outbox exit, if any)
   */
  public Response execute() throws IOException {
    ClientLifecycle lifecycle = runtime().lifecycle();
    if (!registeredForLife()) {
      // A plain run registers only while it waits (ClientLifecycle).
      if (lifecycle.isClosed()) {
        throw ClientLifecycle.closedError();
      }
      return runAttempts();
    }
    lifecycle.enter(this);
    try {
      return runBlocking();
    } finally {
      lifecycle.exit(this);
    }
  }

  private Response runBlocking() throws IOException {
    Features on = features;
    if (on == null) {
      return runAttempts();
    }
    Steps s = on.steps;
    UnaryOperator<IOException> exit = on.exit;
    Response r;
    try {
      r = drive(s, on.inner);
      if (!STATE.compareAndSet(this, RUNNING, RETURNED)) {
        r.close(); // cancelled just before it was handed over
        throw s.canceled();
      }
    } catch (IOException e) {
      throw exit == null ? e : exit.apply(e);
    }
    return r;
  }

  private Response drive(Steps m, Steps in) throws IOException {
    Step step = m.start();
    while (true) {
      if (step instanceof Step.Done done) {
        return done.response();
      }
      if (step instanceof Step.Wait wait) {
        // cancel() completes it: the wait ends at once, and the machine sees the cancel.
        CompletableFuture<Void> woken = new CompletableFuture<>();
        current = woken;
        if (isRunCanceled() || closed()) {
          woken.complete(null); // cancel() or close() read current before it was this wait
        }
        try {
          runtime().timeSource().sleep(wait.delay(), woken);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw m.waitStopped(e);
        }
        step = m.waited();
        continue;
      }
      Response r;
      try {
        if (step instanceof Step.Send send) {
          r = track(send.operation()).execute();
        } else if (in != null) {
          r = drive(in, null);
        } else {
          current = null; // the attempts' call is the watched one (see send())
          try {
            r = runAttempts();
          } finally {
            attemptsEnded();
          }
        }
      } catch (IOException e) {
        step = m.failed(e);
        continue;
      }
      step = m.answered(r);
    }
  }

  /** The attempts, blocking: the retry loop's blocking driver, or a hedged run awaited. */
  private Response runAttempts() throws IOException {
    if (hedging != null) {
      return awaitHedged();
    }
    return BlockingDriver.run(this, this);
  }

  /**
   * Sends one attempt for the blocking driver: each attempt is its own OkHttp call, carrying the
   * attempt as a call tag.
   */
  @Override
  public Response send(Attempt attempt, Request request) throws IOException {
    // The call becomes the watched one, behind a fence (newAttemptCall): a cancel (which reads the
    // watched call after cancelling the attempts) or a closeNow() either saw it or is seen here.
    Call call = newAttemptCall(attempt, request);
    if (isCanceled() || runtime().lifecycle().isClosedNow()) {
      call.cancel();
    }
    return call.execute();
  }

  /** Whether the blocking driver's last attempt's call was cancelled. */
  @Override
  public boolean lastCanceled() {
    Call call = watchedCall();
    return call != null && call.isCanceled();
  }

  /** A blocking hedged run: the hedging driver runs on OkHttp's threads; this one waits. */
  private Response awaitHedged() throws IOException {
    HedgingDriver h = new HedgingDriver(this, hedging);
    current = h;
    CompletableFuture<Response> f = h.start();
    try {
      return f.get();
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      // The copies in flight may have reached the server (mayHaveExecuted); a hedged operation is
      // idempotent, so the same key (or method) may be retried safely.
      IOException interrupted = h.interruptedFailure();
      h.cancel();
      throw interrupted;
    } catch (CancellationException ce) {
      throw h.canceledFailure();
    } catch (ExecutionException ee) {
      Throwable cause = ee.getCause();
      if (cause instanceof IOException io) {
        throw io;
      } else if (cause instanceof RuntimeException re) {
        throw re;
      } else if (cause instanceof Error err) {
        throw err;
      }
      throw new IOException(cause);
    }
  }

  private static ResilientHttpException canceledFailure(Execution e) {
    return new ResilientHttpException("operation canceled", e.key(), e.keySent(),
        e.attempts(), "canceled", null);
  }

  // ---------------------------------------------------------------- the non-blocking driver

  /**
   * Runs without holding a thread; see {@code Operation.executeAsync()}. Completing the returned
   * future from outside (cancel, {@code orTimeout}, ...) cancels the run.
   *
   * @return the future of the final response, which the caller must close
   */
  public CompletableFuture<Response> executeAsync() {
    ClientLifecycle lifecycle = runtime().lifecycle();
    if (!registeredForLife()) {
      // A plain run registers only while it waits (ClientLifecycle).
      if (lifecycle.isClosed()) {
        throw ClientLifecycle.closedError();
      }
      return attemptsAsync();
    }
    lifecycle.enter(this);
    CompletableFuture<Response> f;
    try {
      f = runAsync();
    } catch (RuntimeException | Error e) {
      lifecycle.exit(this);
      throw e;
    }
    f.whenComplete((r, e) -> lifecycle.exit(this));
    return f;
  }

  private CompletableFuture<Response> runAsync() {
    Features on = features;
    if (on == null) {
      return attemptsAsync();
    }
    Steps s = on.steps;
    OperationFuture result = new OperationFuture(this::cancelRun);
    on.future = result;
    if (isRunCanceled() && !runtime().lifecycle().isClosedNow()) {
      // cancel() came before the future was published. A closeNow() does not cancel it: the
      // steps see the close and fail the run with it (client-closed), as they do later on.
      result.cancelFromOperation();
    }
    new Chain(s, on.inner, result, true).next(Runnable::run, s::start);
    return result;
  }

  /** The attempts, without holding a thread: the async driver, or the hedging driver. */
  private CompletableFuture<Response> attemptsAsync() {
    if (hedging != null) {
      HedgingDriver h = new HedgingDriver(this, hedging);
      current = h;
      return h.start();
    }
    AsyncDriver a = new AsyncDriver(this);
    current = a;
    return a.start();
  }

  /**
   * The attempts of a run with steps ended: from now on a cancel or a close is the steps' (the
   * attempts' counters stay, for the operation's getters).
   */
  private void attemptsEnded() {
    ownAttempts = false;
    forgetLastAttempt(); // the watchdog drops its call once it is done (Execution.forgotten)
  }

  private Operation track(Operation step) {
    current = step;
    if (isRunCanceled()) {
      step.cancel(); // cancel() read current before it was this step
    }
    return step;
  }

  /** How a continuation gets its next step (from the machine; may throw the run's failure). */
  @FunctionalInterface
  private interface NextStep {
    Step get() throws IOException;
  }

  /**
   * One machine driven without a thread: the outermost one completes the run's future; an inner
   * one (the outcome query under the 202 wait) completes a plain future its outer step waits on.
   */
  private final class Chain implements Runnable {
    private final Steps machine;
    private final Steps in;
    private final CompletableFuture<Response> result;
    private final boolean outer;
    /** The scheduled wait, while the machine waits. */
    private volatile ScheduledWait timer;

    Chain(Steps machine, Steps in, CompletableFuture<Response> result, boolean outer) {
      this.machine = machine;
      this.in = in;
      this.result = result;
      this.outer = outer;
    }

    /**
     * Asks for the next step and carries it out. What escapes (user code, or a bug) ends the run
     * with it; a {@link VirtualMachineError} is passed on afterwards. {@code completion} runs the
     * run's completion: OkHttp's dispatcher after a scheduled wait, so that dependent stages never
     * run on the scheduler's thread.
     */
    void next(Executor completion, NextStep source) {
      try {
        carryOut(source.get(), completion);
      } catch (IOException | RuntimeException | Error e) {
        fail(e, completion);
        if (e instanceof VirtualMachineError) {
          throw (VirtualMachineError) e;
        }
      }
    }

    private void carryOut(Step step, Executor completion) throws IOException {
      if (step instanceof Step.Done done) {
        succeed(done.response(), completion);
      } else if (step instanceof Step.Wait wait) {
        // Published before it is armed: a zero-delay timer may fire at once, and the step it runs
        // (a poll) makes itself what a cancel stops; publishing after would put this wait back
        // over it, and a cancel would then miss the poll.
        ScheduledWait w = ScheduledWait.of(this);
        timer = w;
        current = this;
        if (isRunCanceled() || closed()) {
          cutShort(); // cancel() or close() read current before it was this wait
          return;
        }
        try {
          w.arm(runtime().scheduler(), DurationMath.toNanos(wait.delay()));
        } catch (RejectedExecutionException e) {
          if (w.cutShort()) {
            throw machine.waitStopped(e);
          }
          // A cancel or a close took the wait meanwhile and carried out its step.
        }
      } else {
        CompletableFuture<Response> sent;
        if (step instanceof Step.Send send) {
          sent = track(send.operation()).executeAsync();
        } else if (in != null) {
          Chain query = new Chain(in, null, new CompletableFuture<>(), false);
          query.next(Runnable::run, in::start);
          sent = query.result;
        } else {
          sent = attemptsAsync();
          sent.whenComplete((r, e) -> attemptsEnded());
        }
        sent.whenComplete((r, e) -> next(Runnable::run,
            () -> e == null ? machine.answered(r) : failed(e)));
      }
    }

    /** The wait is over: the machine's next step, completing (if it ends) on OkHttp's dispatcher. */
    @Override
    public void run() {
      timer = null;
      next(runtime().wrapped().dispatcher().executorService(), machine::waited);
    }

    /**
     * Cuts the wait short: the timer will never run it, so the machine sees the cancel now (unless
     * the timer already claimed the wait: then its run sees the cancel).
     */
    void cutShort() {
      ScheduledWait t = timer;
      if (t != null && t.cutShort()) {
        run();
      }
    }

    private Step failed(Throwable e) throws IOException {
      Throwable cause = Floors.unwrap(e);
      if (cause instanceof IOException io) {
        return machine.failed(io);
      } else if (cause instanceof RuntimeException re) {
        throw re; // a cancelled step's CancellationException, or user code's failure
      } else if (cause instanceof Error err) {
        throw err;
      }
      throw new CompletionException(cause);
    }

    private void succeed(Response response, Executor completion) {
      if (!outer) {
        if (!result.complete(response)) {
          response.close();
        }
        return;
      }
      if (!STATE.compareAndSet(Run.this, RUNNING, RETURNED)) {
        response.close(); // cancelled first: cancel() completed the future already
        return;
      }
      completeOn(completion, () -> {
        if (!((OperationFuture) result).completeFromOperation(response)) {
          response.close();
        }
      });
    }

    private void fail(Throwable e, Executor completion) {
      if (!outer) {
        result.completeExceptionally(e);
        return;
      }
      UnaryOperator<IOException> exit = features.exit;
      Throwable failure = exit != null && e instanceof IOException io ? exit.apply(io) : e;
      completeOn(completion, () -> ((OperationFuture) result).failFromOperation(failure));
    }
  }

  /** Completes on {@code executor}, or here when it refuses (a client being closed). */
  private static void completeOn(Executor executor, Runnable completion) {
    try {
      executor.execute(completion);
    } catch (RejectedExecutionException e) {
      completion.run();
    }
  }

  /** No feature but the outbox exit: the attempts, and their answer. */
  private static final class AttemptsOnly implements Steps {
    private final Execution op;

    AttemptsOnly(Execution op) {
      this.op = op;
    }

    @Override
    public Step start() {
      return Step.ATTEMPTS;
    }

    @Override
    public Step answered(Response response) {
      return new Step.Done(response);
    }

    @Override
    public Step failed(IOException failure) throws IOException {
      throw failure;
    }

    @Override
    public Step waited() {
      throw new IllegalStateException("no waits");
    }

    @Override
    public IOException waitStopped(Exception cause) {
      throw new IllegalStateException("no waits", cause);
    }

    @Override
    public IOException canceled() {
      return canceledFailure(op);
    }
  }
}
