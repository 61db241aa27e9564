package dev.outboxreplay.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxreplay.HttpContract;
import dev.outboxreplay.IdempotencyKey;
import dev.outboxreplay.Reconciliation;
import dev.outboxreplay.StoredResponse;
import java.io.IOException;
import java.util.Base64;
import java.util.Objects;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Asks a receiver what became of an idempotency key, over the reconciliation endpoint defined in
 * {@link HttpContract}: {@code GET {base}/_outbox/reconcile} with the key (and tenant) headers.
 * Thread-safe.
 */
public final class ReconciliationClient {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final OkHttpClient client;
  private final HttpUrl endpoint;
  private final KeyHeaderFormat keyFormat;
  private final int maxResponseBytes;

  /**
   * @param client a client from {@link OkHttpClients}
   * @param baseUrl the receiver's base URL, e.g. {@code http://127.0.0.1:8080}
   */
  public ReconciliationClient(OkHttpClient client, HttpUrl baseUrl) {
    this(client, baseUrl, KeyHeaderFormat.STRUCTURED_STRING,
        OkHttpTransport.DEFAULT_MAX_RESPONSE_BYTES);
  }

  /**
   * @param client a client from {@link OkHttpClients}
   * @param baseUrl the receiver's base URL, e.g. {@code http://127.0.0.1:8080}
   * @param keyFormat how the key header is written, as on the commands themselves
   * @param maxResponseBytes the longest answer read; a longer one is not a reconciliation
   *     document
   */
  public ReconciliationClient(OkHttpClient client, HttpUrl baseUrl, KeyHeaderFormat keyFormat,
      int maxResponseBytes) {
    this.client = Objects.requireNonNull(client, "client == null");
    this.keyFormat = Objects.requireNonNull(keyFormat, "keyFormat == null");
    this.maxResponseBytes = maxResponseBytes;
    this.endpoint = baseUrl.resolve(
        stripTrailingSlash(baseUrl.encodedPath()) + HttpContract.RECONCILE_PATH);
    if (endpoint == null) {
      throw new IllegalArgumentException("cannot build the reconciliation URL from " + baseUrl);
    }
  }

  /**
   * What the receiver knows about {@code key} in {@code tenant} (null for the default tenant).
   *
   * @throws UnsupportedException when the receiver has no reconciliation endpoint: it answers
   *     404, 405 or 501, or something that is not a reconciliation document
   * @throws TooLargeException when the answer is longer than the limit
   * @throws IOException when the receiver cannot be reached or answers another status
   */
  public Reconciliation reconcile(IdempotencyKey key, String tenant) throws IOException {
    return reconcile(key, tenant, null);
  }

  /**
   * The same, with the session's bearer {@code credentials} (null for none), which a receiver
   * that derives the tenant from credentials needs on the lookup as on the command.
   */
  public Reconciliation reconcile(IdempotencyKey key, String tenant, String credentials)
      throws IOException {
    Request.Builder request = new Request.Builder().url(endpoint).get()
        .header(HttpContract.IDEMPOTENCY_KEY, keyFormat.headerValue(key));
    if (tenant != null) {
      request.header(HttpContract.TENANT, tenant);
    }
    if (credentials != null) {
      request.header("Authorization", "Bearer " + credentials);
    }
    try (Response response = client.newCall(request.build()).execute()) {
      LimitedBody body = LimitedBody.read(response.body(), maxResponseBytes);
      String text = new String(body.bytes(), java.nio.charset.StandardCharsets.UTF_8);
      int code = response.code();
      if (code == 404 || code == 405 || code == 501) {
        throw new UnsupportedException("GET " + endpoint.encodedPath() + " answered " + code);
      }
      if (code != 200) {
        throw new IOException("reconciliation at " + endpoint + " answered " + code);
      }
      if (body.cut()) {
        throw new TooLargeException("GET " + endpoint.encodedPath() + " answered more than "
            + maxResponseBytes + " bytes");
      }
      try {
        return parse(text);
      } catch (IOException e) {
        throw new UnsupportedException("GET " + endpoint.encodedPath()
            + " answered 200 with something that is not a reconciliation document");
      }
    }
  }

  /**
   * The receiver's answer about this key is longer than the limit (a committed answer with a
   * huge body): this key cannot be reconciled; a resend with the same key gets the stored answer.
   */
  public static final class TooLargeException extends IOException {
    private static final long serialVersionUID = 1L;

    public TooLargeException(String message) {
      super(message);
    }
  }

  /** The receiver has no reconciliation endpoint: it is a plain Idempotency-Key receiver. */
  public static final class UnsupportedException extends IOException {
    private static final long serialVersionUID = 1L;

    public UnsupportedException(String message) {
      super(message);
    }
  }

  static Reconciliation parse(String text) throws IOException {
    JsonNode doc = JSON.readTree(text);
    HttpContract.ReconcileStatus status;
    try {
      status = HttpContract.ReconcileStatus.ofWire(doc.path("status").asText(""));
    } catch (IllegalArgumentException e) {
      throw new IOException("not a reconciliation document: " + text, e);
    }
    return switch (status) {
      case NOT_SEEN -> Reconciliation.notSeen();
      case PROCESSING -> Reconciliation.processing();
      case FAILED -> Reconciliation.failed(doc.path("error").asText(""));
      case COMMITTED -> {
        JsonNode r = doc.path("response");
        if (!r.path("status").isInt()) {
          throw new IOException("committed reconciliation without response.status: " + text);
        }
        yield Reconciliation.committed(new StoredResponse(r.path("status").asInt(),
            Base64.getDecoder().decode(r.path("bodyBase64").asText(""))));
      }
    };
  }

  private static String stripTrailingSlash(String path) {
    return path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
  }
}
