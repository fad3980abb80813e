package io.github.resilienthttp.testkit;

import io.github.resilienthttp.TimeSource;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.HttpUrl;

/**
 * A test server for asynchronous operations (long-running jobs): {@code POST /jobs} answers
 * {@code 202 Accepted} with a status resource; {@code GET /jobs/{id}/status} reports
 * {@code {"status":"Running"}} until the job's {@link JobScript} ends it ({@code Succeeded} with a
 * {@code resourceLocation}, or the result inline; {@code Failed} with an {@code error}; or lost:
 * {@code 404}); {@code GET /jobs/{id}/result} is the result. Polls may be answered with scripted
 * {@code 429}/{@code 503} and a {@code Retry-After} first. The submit honours the
 * {@code Idempotency-Key} header: the same key gets the same job (one effect), unless
 * {@link #ignoreKeys(boolean)}. {@code DELETE} or {@code POST /jobs/{id}/cancel} cancels a job (its
 * polls answer {@code Canceled} from then on); where the job announces that URL is
 * {@link #cancelLink(CancelLink)}. A sibling of {@link IdempotentTestServer}, on MockWebServer 3,
 * loopback, plain HTTP/1.1.
 *
 * <p>Time (for jobs that end after a duration, and for the arrival times of polls) comes from the
 * {@link TimeSource} given, so that a test with a {@link FakeTimeSource} can assert exactly when each
 * poll arrived. Thread-safe.
 */
public final class AsyncJobServer implements Closeable {
  /** Where the {@code 202} points to the status resource. */
  public enum StatusHeader {
    /** {@code Operation-Location}, with {@code Location} pointing at the result. */
    OPERATION_LOCATION,
    /** {@code Azure-AsyncOperation}, with {@code Location} pointing at the result. */
    AZURE_ASYNC_OPERATION,
    /** {@code Location} only. */
    LOCATION,
    /** No header: a {@code "statusUrl"} field of the body. */
    BODY_FIELD
  }

  /**
   * How a job runs: how it ends, after how many polls or how long, and how polls are answered.
   * Immutable; each {@code with…} returns a copy.
   *
   * @param polls polls answered {@code Running} before the end (when {@code after} is null)
   * @param after time from the submit to the end, or {@code null}
   * @param end how it ends
   * @param retryAfter a {@code Retry-After} on the {@code 202} and on each running poll, or null
   * @param faultCodes statuses answered (with {@code Retry-After: 1}) to the first polls, in order
   * @param statusHeader where the status resource is announced
   * @param resultInline whether the terminal status body is the result (no resourceLocation)
   * @param seeOther whether success is announced with a {@code 303 See Other} to the result
   */
  public record JobScript(int polls, Duration after, End end, Duration retryAfter,
      List<Integer> faultCodes, StatusHeader statusHeader, boolean resultInline,
      boolean seeOther) {
    /** How a job ends. */
    public enum End {
      /** {@code {"status":"Succeeded"}}. */
      SUCCEEDS,
      /** {@code {"status":"Failed","error":…}}. */
      FAILS,
      /** {@code {"status":"Canceled"}}. */
      CANCELED,
      /** The status resource answers 404 from then on. */
      LOST
    }

    /**
     * Validates and copies the script; the factories make the usual ones.
     *
     * @param polls polls answered {@code Running} before the end (when {@code after} is null)
     * @param after time from the submit to the end, or {@code null}
     * @param end how it ends
     * @param retryAfter a {@code Retry-After} on the {@code 202} and on each running poll, or null
     * @param faultCodes statuses answered (with {@code Retry-After: 1}) to the first polls, in order
     * @param statusHeader where the status resource is announced
     * @param resultInline whether the terminal status body is the result (no resourceLocation)
     * @param seeOther whether success is announced with a {@code 303 See Other} to the result
     */
    public JobScript {
      faultCodes = List.copyOf(faultCodes);
      Objects.requireNonNull(end, "end");
      Objects.requireNonNull(statusHeader, "statusHeader");
    }

    /**
     * {@return a job that succeeds after {@code n} running polls}
     *
     * @param n running polls before the job succeeds, 0 or more
     */
    public static JobScript succeedsAfterPolls(int n) {
      return new JobScript(n, null, End.SUCCEEDS, null, List.of(), StatusHeader.OPERATION_LOCATION,
          false, false);
    }

    /**
     * {@return a job that succeeds once {@code d} has passed since its submit}
     *
     * @param d time from the submit to success, on the server's clock
     */
    public static JobScript succeedsAfter(Duration d) {
      return new JobScript(0, d, End.SUCCEEDS, null, List.of(), StatusHeader.OPERATION_LOCATION,
          false, false);
    }

    /**
     * {@return a job that fails after {@code n} running polls}
     *
     * @param n running polls before the job fails, 0 or more
     */
    public static JobScript failsAfterPolls(int n) {
      return succeedsAfterPolls(n).withEnd(End.FAILS);
    }

    /**
     * {@return a copy that ends with {@code e}}
     *
     * @param e how the job ends
     */
    public JobScript withEnd(End e) {
      return new JobScript(polls, after, e, retryAfter, faultCodes, statusHeader, resultInline,
          seeOther);
    }

    /**
     * {@return a copy with {@code Retry-After} on the 202 and running polls}
     *
     * @param d the {@code Retry-After} value, sent in whole seconds
     */
    public JobScript withRetryAfter(Duration d) {
      return new JobScript(polls, after, end, d, faultCodes, statusHeader, resultInline, seeOther);
    }

    /**
     * {@return a copy whose first polls are answered with these statuses and Retry-After: 1}
     *
     * @param codes the statuses of the first polls, in order (e.g. 503, 429)
     */
    public JobScript withPollFaults(Integer... codes) {
      return new JobScript(polls, after, end, retryAfter, List.of(codes), statusHeader,
          resultInline, seeOther);
    }

    /**
     * {@return a copy that announces its status resource with {@code h}}
     *
     * @param h the header (or body field) that names the status resource
     */
    public JobScript withStatusHeader(StatusHeader h) {
      return new JobScript(polls, after, end, retryAfter, faultCodes, h, resultInline, seeOther);
    }

    /** {@return a copy whose terminal status body is the result} */
    public JobScript withResultInline() {
      return new JobScript(polls, after, end, retryAfter, faultCodes, statusHeader, true, seeOther);
    }

    /** {@return a copy that announces success with 303 See Other to the result} */
    public JobScript withSeeOther() {
      return new JobScript(polls, after, end, retryAfter, faultCodes, statusHeader, resultInline,
          true);
    }
  }

  /**
   * Where the {@code 202} and running status answers give the job's cancel URL
   * ({@code /jobs/{id}/cancel}, which a {@code DELETE} or {@code POST} cancels).
   */
  public enum CancelLink {
    /** Nowhere: the job cannot be cancelled (the endpoint still exists). */
    NONE,
    /** {@code Link: </jobs/{id}/cancel>; rel="cancel"}. */
    LINK_HEADER,
    /** A {@code "cancelUrl"} field of the JSON body. */
    BODY_FIELD,
    /** A {@code Link} with {@code rel="cancel"} on another origin ({@code http://elsewhere.invalid}). */
    OTHER_ORIGIN
  }

  /**
   * One request as the server saw it, with the fake-or-real time of its arrival.
   *
   * @param method the request's method
   * @param path the request's path
   * @param idempotencyKey its {@code Idempotency-Key} header, or {@code null}
   * @param at when it arrived, since the server started (on the server's time source)
   */
  public record Seen(String method, String path, String idempotencyKey, Duration at) {}

  private final MockWebServer server = new MockWebServer();
  private final TimeSource time;
  private final long startNanos;
  private volatile JobScript script = JobScript.succeedsAfterPolls(2);
  private volatile boolean ignoreKeys;
  private volatile CancelLink cancelLink = CancelLink.NONE;
  private final Map<String, Job> jobsByKey = new ConcurrentHashMap<>();
  private final Map<String, Job> jobs = new ConcurrentHashMap<>();
  private final AtomicInteger ids = new AtomicInteger();
  private final List<Seen> seen = new ArrayList<>();

  private static final class Job {
    final String id;
    final JobScript script;
    final long submittedNanos;
    int polls;
    int faultsLeft;
    volatile boolean canceled;

    Job(String id, JobScript script, long submittedNanos) {
      this.id = id;
      this.script = script;
      this.submittedNanos = submittedNanos;
    }
  }

  /**
   * A server on the loopback interface, started.
   *
   * @param time the clock of job durations and arrival times
   */
  public AsyncJobServer(TimeSource time) {
    this.time = Objects.requireNonNull(time, "time");
    this.startNanos = time.nanoTime();
    server.setServerSocketFactory(new NoDelayServerSocketFactory());
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        return handle(request);
      }
    });
    try {
      server.start(InetAddress.getLoopbackAddress(), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The script of jobs submitted from now on.
   *
   * @param script the script
   * @return this server
   */
  public AsyncJobServer script(JobScript script) {
    this.script = Objects.requireNonNull(script, "script");
    return this;
  }

  /**
   * Whether the submit ignores idempotency keys (a downstream without key support): every submit is a
   * new job.
   *
   * @param ignore whether to ignore keys
   * @return this server
   */
  public AsyncJobServer ignoreKeys(boolean ignore) {
    this.ignoreKeys = ignore;
    return this;
  }

  /**
   * Where jobs announce their cancel URL from now on. Default {@link CancelLink#NONE}.
   *
   * @param link where
   * @return this server
   */
  public AsyncJobServer cancelLink(CancelLink link) {
    this.cancelLink = Objects.requireNonNull(link, "link");
    return this;
  }

  /** {@return how many jobs were cancelled through their cancel endpoint} */
  public int jobsCanceled() {
    return (int) jobs.values().stream().filter(j -> j.canceled).count();
  }

  /**
   * {@return the URL of {@code path} on this server}
   *
   * @param path an absolute path, e.g. {@code /jobs}
   */
  public HttpUrl url(String path) {
    return server.url(path);
  }

  /** {@return jobs created: the business effects of submits} */
  public int jobsCreated() {
    return jobs.size();
  }

  /** {@return every request seen, in order of arrival} */
  public synchronized List<Seen> seen() {
    return List.copyOf(seen);
  }

  /**
   * {@return the requests seen with this method whose path ends with {@code suffix}}
   *
   * @param method the HTTP method, e.g. {@code GET}
   * @param suffix the end of the path, e.g. {@code /status}
   */
  public synchronized List<Seen> seen(String method, String suffix) {
    return seen.stream().filter(s -> s.method().equals(method) && s.path().endsWith(suffix))
        .toList();
  }

  private MockResponse handle(RecordedRequest request) {
    String path = request.getUrl().encodedPath();
    String method = request.getMethod();
    String key = request.getHeaders().get("Idempotency-Key");
    synchronized (this) {
      seen.add(new Seen(method, path, key, Duration.ofNanos(time.nanoTime() - startNanos)));
    }
    if (method.equals("POST") && path.equals("/jobs")) {
      return submit(key);
    }
    String[] parts = path.split("/");
    if (parts.length == 4 && parts[1].equals("jobs") && parts[3].equals("cancel")
        && (method.equals("DELETE") || method.equals("POST"))) {
      Job job = jobs.get(parts[2]);
      if (job == null) {
        return json(404, "{\"status\":\"NotFound\"}");
      }
      job.canceled = true;
      return json(200, "{\"id\":\"" + job.id + "\",\"status\":\"Canceled\"}");
    }
    if (parts.length == 4 && parts[1].equals("jobs") && method.equals("GET")) {
      Job job = jobs.get(parts[2]);
      if (job == null) {
        return json(404, "{\"status\":\"NotFound\"}");
      }
      if (parts[3].equals("status")) {
        return poll(job);
      } else if (parts[3].equals("result")) {
        return json(200, result(job));
      }
    }
    return json(404, "{\"error\":\"no such resource\"}");
  }

  private MockResponse submit(String key) {
    Job job;
    if (key != null && !ignoreKeys) {
      job = jobsByKey.computeIfAbsent(key, k -> newJob());
    } else {
      job = newJob();
    }
    String status = "/jobs/" + job.id + "/status";
    String result = "/jobs/" + job.id + "/result";
    MockResponse.Builder b = new MockResponse.Builder().code(202)
        .addHeader("Content-Type", "application/json");
    switch (job.script.statusHeader()) {
      case OPERATION_LOCATION -> b.addHeader("Operation-Location", status)
          .addHeader("Location", result);
      case AZURE_ASYNC_OPERATION -> b.addHeader("Azure-AsyncOperation", status)
          .addHeader("Location", result);
      case LOCATION -> b.addHeader("Location", status);
      case BODY_FIELD -> { }
    }
    if (job.script.retryAfter() != null) {
      b.addHeader("Retry-After", Long.toString(job.script.retryAfter().toSeconds()));
    }
    addCancelLink(b, job);
    return b.body("{\"id\":\"" + job.id + "\",\"statusUrl\":\"" + status + "\""
        + cancelField(job) + "}").build();
  }

  private void addCancelLink(MockResponse.Builder b, Job job) {
    String cancel = "/jobs/" + job.id + "/cancel";
    switch (cancelLink) {
      case LINK_HEADER -> b.addHeader("Link", "</jobs/" + job.id + ">; rel=\"self\", <" + cancel
          + ">; rel=\"cancel\"");
      case OTHER_ORIGIN -> b.addHeader("Link", "<http://elsewhere.invalid" + cancel
          + ">; rel=\"cancel\"");
      default -> { }
    }
  }

  private String cancelField(Job job) {
    return cancelLink == CancelLink.BODY_FIELD
        ? ",\"cancelUrl\":\"/jobs/" + job.id + "/cancel\"" : "";
  }

  private Job newJob() {
    String id = "j" + ids.incrementAndGet();
    Job job = new Job(id, script, time.nanoTime());
    job.faultsLeft = script.faultCodes().size();
    jobs.put(id, job);
    return job;
  }

  private MockResponse poll(Job job) {
    JobScript s = job.script;
    if (job.canceled) {
      return json(200, "{\"id\":\"" + job.id + "\",\"status\":\"Canceled\"}");
    }
    boolean done;
    synchronized (job) {
      if (job.faultsLeft > 0) {
        int code = s.faultCodes().get(s.faultCodes().size() - job.faultsLeft);
        job.faultsLeft--;
        return new MockResponse.Builder().code(code).addHeader("Retry-After", "1")
            .body("{\"error\":\"try later\"}").build();
      }
      job.polls++;
      done = s.after() != null
          ? time.nanoTime() - job.submittedNanos >= s.after().toNanos()
          : job.polls > s.polls();
    }
    if (!done) {
      MockResponse.Builder b = new MockResponse.Builder().code(200)
          .addHeader("Content-Type", "application/json")
          .body("{\"id\":\"" + job.id + "\",\"status\":\"Running\"" + cancelField(job) + "}");
      addCancelLink(b, job);
      if (s.retryAfter() != null) {
        b.addHeader("Retry-After", Long.toString(s.retryAfter().toSeconds()));
      }
      return b.build();
    }
    return switch (s.end()) {
      case SUCCEEDS -> {
        if (s.seeOther()) {
          yield new MockResponse.Builder().code(303)
              .addHeader("Location", "/jobs/" + job.id + "/result").build();
        }
        yield json(200, s.resultInline()
            ? "{\"id\":\"" + job.id + "\",\"status\":\"Succeeded\",\"result\":\"done\"}"
            : "{\"id\":\"" + job.id + "\",\"status\":\"Succeeded\",\"resourceLocation\":\"/jobs/"
                + job.id + "/result\"}");
      }
      case FAILS -> json(200, "{\"id\":\"" + job.id + "\",\"status\":\"Failed\",\"error\":"
          + "{\"code\":\"InsufficientFunds\",\"message\":\"card declined\"}}");
      case CANCELED -> json(200, "{\"id\":\"" + job.id + "\",\"status\":\"Canceled\"}");
      case LOST -> json(404, "{\"status\":\"NotFound\"}");
    };
  }

  private static String result(Job job) {
    return "{\"id\":\"" + job.id + "\",\"result\":\"done\"}";
  }

  private static MockResponse json(int code, String body) {
    return new MockResponse.Builder().code(code).addHeader("Content-Type", "application/json")
        .body(body).build();
  }

  @Override
  public void close() {
    server.close();
  }
}
