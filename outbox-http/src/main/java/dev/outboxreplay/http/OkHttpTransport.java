package dev.outboxreplay.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxreplay.FailureInjector;
import dev.outboxreplay.FailurePoint;
import dev.outboxreplay.HttpContract;
import dev.outboxreplay.OperationName;
import dev.outboxreplay.OutboxRecord;
import dev.outboxreplay.Reconciliation;
import dev.outboxreplay.SessionRuntime;
import dev.outboxreplay.StoredResponse;
import dev.outboxreplay.Transport;
import dev.outboxreplay.TransportResult;
import dev.outboxreplay.TransportResult.Kind;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import okhttp3.Call;
import okhttp3.EventListener;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends commands over HTTP with OkHttp, following {@link HttpContract}: {@code POST
 * {base}/{operation}} (route configurable), the stored bytes as a one-shot body, the key, digest,
 * command id, session version, tenant and bearer credentials as headers. OkHttp is configured
 * never to resend on its own, so one {@link #send} is at most one request on the wire.
 *
 * <p>Classification (override per status code with {@link Builder#classify}):
 *
 * <table>
 *   <caption>how an attempt is classified</caption>
 *   <tr><th>what happened</th><th>kind</th></tr>
 *   <tr><td>failure before any byte of the request was written (connection refused, unknown
 *       host, no route)</td><td>NOT_SENT</td></tr>
 *   <tr><td>timeout or reset after the request started</td><td>UNKNOWN</td></tr>
 *   <tr><td>2xx</td><td>ACKED</td></tr>
 *   <tr><td>408, 425, 429, 500, 502, 503, 504 and other 5xx (Retry-After honored)</td>
 *       <td>RETRYABLE</td></tr>
 *   <tr><td>409 whose problem type is request-in-progress; 423 (a receiver's lock on the key,
 *       such as django-idempotency-key's lock timeout)</td><td>IN_PROGRESS</td></tr>
 *   <tr><td>other 409, and 422 (key reused with another payload)</td><td>CONFLICT</td></tr>
 *   <tr><td>401</td><td>UNAUTHORIZED</td></tr>
 *   <tr><td>403</td><td>FORBIDDEN</td></tr>
 *   <tr><td>other 4xx, 1xx, 3xx</td><td>REJECTED</td></tr>
 * </table>
 *
 * <p>A 2xx is never turned into a resend. {@code Retry-After} is read in every form RFC 9110
 * allows ({@link RetryAfter}). A receiver that answers every repeat of a key with a status of its
 * own instead of the stored answer (django-idempotency-key's default 409) is classified with
 * {@link Kind#KEY_ALREADY_USED}: {@code classify(409, Kind.KEY_ALREADY_USED)}.
 *
 * <p>An answer's body is read up to {@link Builder#maxResponseBytes} (default {@value
 * #DEFAULT_MAX_RESPONSE_BYTES} bytes). A 2xx with a longer body is acked without its answer
 * (error code {@code response_too_large}; the response applier gets none); any other longer
 * answer keeps its first bytes as detail.
 *
 * <p>Reconciliation: with {@link Builder#reconciliation(boolean)} on (the default), a row whose
 * outcome is unknown is first looked up on the receiver's reconciliation endpoint. A receiver
 * without one (it answers 404, 405 or 501, or something that is not a reconciliation document) is
 * a plain IETF-draft receiver: the transport remembers that, logs it once, and answers every later
 * {@link #reconcile} with empty, so the replayer resends with the same key and the receiver
 * answers the repeat with its stored response. Thread-safe.
 */
public final class OkHttpTransport implements Transport {
  private static final Logger LOG = LoggerFactory.getLogger(OkHttpTransport.class);
  private static final MediaType JSON = MediaType.get("application/json");
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final String IN_PROGRESS_TYPE = "urn:outbox:problem:request-in-progress";
  /** Default longest answer body read: 1 MiB, as the default payload limit. */
  public static final int DEFAULT_MAX_RESPONSE_BYTES = 1 << 20;

  private final OkHttpClient client;
  private final Function<OutboxRecord, HttpUrl> route;
  private final boolean usesDefaultRoute;
  private final Map<Integer, Kind> overrides;
  private final Clock clock;
  private final ReconciliationClient reconciliation;
  private final AtomicBoolean reconciliationAvailable;
  private final FailureInjector failures;
  private final KeyHeaderFormat keyFormat;
  private final int maxResponseBytes;

  private OkHttpTransport(Builder b) {
    // A send carries its tracker as a request tag; other calls (reconciliation) get none.
    this.client = OkHttpClients.configure(b.client.newBuilder(), b.callTimeout)
        .eventListenerFactory(call -> {
          SendTracker tracker = call.request().tag(SendTracker.class);
          return tracker != null ? tracker : EventListener.NONE;
        })
        .build();
    HttpUrl base = b.baseUrl;
    this.usesDefaultRoute = b.route == null;
    this.route = b.route != null ? b.route
        : command -> base.newBuilder().addPathSegment(command.operation()).build();
    this.overrides = Map.copyOf(b.overrides);
    this.clock = b.clock;
    this.reconciliation = b.reconcile
        ? new ReconciliationClient(client, base, b.keyFormat, b.maxResponseBytes) : null;
    this.keyFormat = b.keyFormat;
    this.maxResponseBytes = b.maxResponseBytes;
    this.reconciliationAvailable = new AtomicBoolean(b.reconcile);
    this.failures = b.failures;
  }

  /** A builder for a receiver at {@code baseUrl}, e.g. {@code http://127.0.0.1:8080}. */
  public static Builder builder(HttpUrl baseUrl) {
    return new Builder(baseUrl);
  }

  @Override
  public TransportResult send(OutboxRecord command, SessionRuntime.Snapshot session) {
    if (usesDefaultRoute && !OperationName.isValid(command.operation())) {
      // a row written before the grammar existed: never post it to another path
      return TransportResult.of(Kind.REJECTED, null, "invalid_operation",
          "not sent: the operation name is not " + OperationName.GRAMMAR);
    }
    String key;
    try {
      key = keyFormat.headerValue(command.idempotencyKey());
    } catch (IllegalArgumentException e) {
      return TransportResult.of(Kind.REJECTED, null, "invalid_key_header", "not sent: "
          + e.getMessage());
    }
    SendTracker tracker = new SendTracker(failures);
    Request.Builder request = new Request.Builder().url(route.apply(command))
        .tag(SendTracker.class, tracker)
        .post(new OneShotBody(command.payload().bytes()))
        .header(HttpContract.IDEMPOTENCY_KEY, key)
        .header(HttpContract.CONTENT_DIGEST,
            HttpContract.contentDigestOf(command.payload().sha256()))
        .header(HttpContract.COMMAND_ID, command.commandId().toString())
        .header(HttpContract.SESSION_VERSION, Long.toString(session.version()))
        .header(HttpContract.TENANT, session.tenant());
    if (session.credentials() != null) {
      request.header("Authorization", "Bearer " + session.credentials());
    }
    try (Response response = client.newCall(request.build()).execute()) {
      LimitedBody body = LimitedBody.read(response.body(), maxResponseBytes);
      return classify(response, body);
    } catch (IOException e) {
      if (!tracker.requestStarted) {
        return TransportResult.of(Kind.NOT_SENT, null, "connect_failed",
            "not sent: " + e);
      }
      String code = e instanceof InterruptedIOException ? "timeout_after_send" : "no_response";
      return TransportResult.of(Kind.UNKNOWN, null, code,
          "the request may have reached the server: " + e);
    }
  }

  @Override
  public Optional<Reconciliation> reconcile(OutboxRecord command, SessionRuntime.Snapshot session)
      throws IOException {
    if (!reconciliationAvailable.get()) {
      return Optional.empty();
    }
    try {
      return Optional.of(reconciliation.reconcile(command.idempotencyKey(), session.tenant(),
          session.credentials()));
    } catch (ReconciliationClient.TooLargeException e) {
      return Optional.empty(); // resent with its key: the receiver gives its stored answer
    } catch (ReconciliationClient.UnsupportedException e) {
      if (reconciliationAvailable.compareAndSet(true, false)) {
        LOG.info("the receiver has no reconciliation endpoint ({}); commands whose outcome is "
            + "unknown are resent with their idempotency key", e.getMessage());
      }
      return Optional.empty();
    }
  }

  /**
   * Whether {@link #reconcile} still asks the receiver: false when turned off, or once the
   * receiver showed it has no reconciliation endpoint.
   */
  public boolean reconciliationAvailable() {
    return reconciliationAvailable.get();
  }

  private TransportResult classify(Response response, LimitedBody body) {
    int code = response.code();
    Duration retryAfter = RetryAfter.parse(response.header("Retry-After"), clock.instant());
    Kind kind = overrides.containsKey(code) ? overrides.get(code)
        : defaultKind(code, body.bytes());
    if (kind == Kind.ACKED && body.cut()) {
      // the effect happened; its answer is too large to keep, so none is applied or stored
      return new TransportResult(Kind.ACKED, null, retryAfter, "response_too_large",
          "acked without its answer: the body is longer than " + maxResponseBytes + " bytes");
    }
    StoredResponse stored = new StoredResponse(code, body.bytes());
    String detail = kind == Kind.ACKED ? ""
        : new String(body.bytes(), StandardCharsets.UTF_8)
            + (body.cut() ? " [cut at " + maxResponseBytes + " bytes]" : "");
    return new TransportResult(kind, stored, retryAfter, "http_" + code, detail);
  }

  /** The default table; see the class comment. */
  static Kind defaultKind(int code, byte[] body) {
    if (code >= 200 && code < 300) {
      return Kind.ACKED;
    }
    return switch (code) {
      case 401 -> Kind.UNAUTHORIZED;
      case 403 -> Kind.FORBIDDEN;
      case 408, 425, 429 -> Kind.RETRYABLE;
      case 409 -> isInProgress(body) ? Kind.IN_PROGRESS : Kind.CONFLICT;
      case 423 -> Kind.IN_PROGRESS;
      case 422 -> Kind.CONFLICT;
      default -> code >= 500 && code < 600 ? Kind.RETRYABLE : Kind.REJECTED;
    };
  }

  private static boolean isInProgress(byte[] body) {
    try {
      return IN_PROGRESS_TYPE.equals(MAPPER.readTree(body).path("type").asText(""));
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Notes whether OkHttp started writing the request, to tell "not sent" from "maybe sent", and
   * reports {@link FailurePoint#AFTER_NETWORK_SEND_BEFORE_RESPONSE} once the whole request was
   * flushed and OkHttp starts reading the answer.
   */
  private static final class SendTracker extends EventListener {
    private final FailureInjector failures;
    volatile boolean requestStarted;

    SendTracker(FailureInjector failures) {
      this.failures = failures;
    }

    @Override
    public void requestHeadersStart(Call call) {
      requestStarted = true;
    }

    @Override
    public void responseHeadersStart(Call call) {
      failures.at(FailurePoint.AFTER_NETWORK_SEND_BEFORE_RESPONSE);
    }
  }

  /** The stored bytes, writable once: OkHttp cannot replay it on its own. */
  private static final class OneShotBody extends RequestBody {
    private final byte[] bytes;

    OneShotBody(byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    public MediaType contentType() {
      return JSON;
    }

    @Override
    public long contentLength() {
      return bytes.length;
    }

    @Override
    public void writeTo(BufferedSink sink) throws IOException {
      sink.write(bytes);
    }

    @Override
    public boolean isOneShot() {
      return true;
    }
  }

  /** Configures an {@link OkHttpTransport}. */
  public static final class Builder {
    private final HttpUrl baseUrl;
    private OkHttpClient client = new OkHttpClient();
    private Duration callTimeout = OkHttpClients.DEFAULT_CALL_TIMEOUT;
    private Function<OutboxRecord, HttpUrl> route;
    private final Map<Integer, Kind> overrides = new HashMap<>();
    private Clock clock = Clock.systemUTC();
    private boolean reconcile = true;
    private FailureInjector failures = FailureInjector.NONE;
    private KeyHeaderFormat keyFormat = KeyHeaderFormat.STRUCTURED_STRING;
    private int maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES;

    private Builder(HttpUrl baseUrl) {
      this.baseUrl = Objects.requireNonNull(baseUrl, "baseUrl == null");
    }

    /** A client to derive from (interceptors, TLS...); retries and redirects are turned off. */
    public Builder client(OkHttpClient client) {
      this.client = Objects.requireNonNull(client, "client == null");
      return this;
    }

    /** End-to-end limit of one attempt; keep it below the replayer's lease. Default 30 s. */
    public Builder callTimeout(Duration callTimeout) {
      this.callTimeout = Objects.requireNonNull(callTimeout, "callTimeout == null");
      return this;
    }

    /** Where a command is posted. Default {@code {base}/{operation}}. */
    public Builder route(Function<OutboxRecord, HttpUrl> route) {
      this.route = Objects.requireNonNull(route, "route == null");
      return this;
    }

    /** Classifies {@code status} as {@code kind}, overriding the default table. */
    public Builder classify(int status, Kind kind) {
      if (status < 100 || status > 599) {
        throw new IllegalArgumentException("not an HTTP status: " + status);
      }
      if (kind == Kind.ACKED && (status < 200 || status > 299)) {
        throw new IllegalArgumentException("only a 2xx may be classified ACKED: " + status);
      }
      if (status >= 200 && status < 300 && kind != Kind.ACKED) {
        throw new IllegalArgumentException("a 2xx is never turned into a resend: " + status);
      }
      overrides.put(status, Objects.requireNonNull(kind, "kind == null"));
      return this;
    }

    /** Clock for HTTP-date {@code Retry-After} values. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock == null");
      return this;
    }

    /**
     * Whether to ask the receiver's reconciliation endpoint before resending a command whose
     * outcome is unknown. Default true; a receiver found without the endpoint is remembered and
     * not asked again (see the class comment). False: always resend with the same key.
     */
    public Builder reconciliation(boolean enabled) {
      this.reconcile = enabled;
      return this;
    }

    /**
     * For tests: called at {@link FailurePoint#AFTER_NETWORK_SEND_BEFORE_RESPONSE}, when the whole
     * request has been written and the answer is awaited. Default {@link FailureInjector#NONE}.
     */
    public Builder failureInjector(FailureInjector failures) {
      this.failures = Objects.requireNonNull(failures, "failureInjector == null");
      return this;
    }

    /**
     * How the {@code Idempotency-Key} header carries the key, on commands and reconciliation
     * alike. Default {@link KeyHeaderFormat#STRUCTURED_STRING}, as the IETF draft says.
     */
    public Builder keyHeaderFormat(KeyHeaderFormat format) {
      this.keyFormat = Objects.requireNonNull(format, "keyHeaderFormat == null");
      return this;
    }

    /**
     * The longest answer body read; see the class comment for a longer one. Default {@link
     * #DEFAULT_MAX_RESPONSE_BYTES}.
     */
    public Builder maxResponseBytes(int maxResponseBytes) {
      this.maxResponseBytes =
          dev.outboxreplay.internal.Arguments.atLeastOne("maxResponseBytes", maxResponseBytes);
      return this;
    }

    public OkHttpTransport build() {
      return new OkHttpTransport(this);
    }
  }
}
