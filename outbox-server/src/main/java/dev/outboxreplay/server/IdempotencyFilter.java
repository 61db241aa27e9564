package dev.outboxreplay.server;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.util.Objects;

/**
 * The Idempotency-Key guard as a {@code jakarta.servlet} {@link Filter}, for an application in a
 * servlet container (Tomcat, Jetty, Undertow, Spring Boot's embedded one): it answers the
 * {@link IdempotencyHandler guard}'s operations ({@code POST {mount}/{operation}}) and
 * reconciliation ({@code GET {mount}/_outbox/reconcile}) with the protocol {@link
 * IdempotentServer} speaks, each operation's handler in the transaction that stores its answer,
 * and passes every other request down the chain to the application's servlets.
 *
 * <p>Register it for the paths below {@code mount}, for example with URL pattern
 * {@code /sync/*} and mount {@code /sync}. Paths are matched below the web application's context
 * path, raw (not percent-decoded). A request body longer than the guard's {@linkplain
 * IdempotencyHandler#maxBodyBytes() largest body} is not read past that size and is answered 413.
 *
 * <p>Thread-safe. It blocks the container's thread while a handler runs. Needs {@code
 * jakarta.servlet-api} 6 on the class path, which the container provides.
 */
public final class IdempotencyFilter implements Filter {
  private final IdempotencyHandler guard;
  private final String mount;

  /**
   * The filter for {@code guard}, answering below {@code mount}: {@code ""} for the context's
   * root, or a path such as {@code /sync} (a leading slash, no trailing one).
   *
   * @throws IllegalArgumentException for a mount that is not "" and not such a path
   */
  public IdempotencyFilter(IdempotencyHandler guard, String mount) {
    this.guard = Objects.requireNonNull(guard, "guard == null");
    Objects.requireNonNull(mount, "mount == null");
    if (!mount.isEmpty() && (!mount.startsWith("/") || mount.endsWith("/"))) {
      throw new IllegalArgumentException("mount is \"\" or a path like /sync, not '" + mount
          + "'");
    }
    this.mount = mount;
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (!(request instanceof HttpServletRequest http)
        || !(response instanceof HttpServletResponse out)) {
      chain.doFilter(request, response);
      return;
    }
    String path = belowMount(http);
    if (path == null || !guard.answers(path)) {
      chain.doFilter(request, response);
      return;
    }
    int limit = guard.maxBodyBytes();
    byte[] body;
    try (InputStream in = http.getInputStream()) {
      byte[] read = in.readNBytes(limit + 1);
      body = read.length > limit ? null : read;
    }
    IdempotencyHandler.Reply reply = guard.respond(http.getMethod(), path, http::getHeader, body);
    out.setStatus(reply.status());
    if (reply.contentType() != null) {
      out.setContentType(reply.contentType());
    }
    reply.headers().forEach(out::setHeader);
    out.setContentLength(reply.body().length);
    out.getOutputStream().write(reply.body());
  }

  /** The request's path below the mount, raw; null when it is not below it. */
  private String belowMount(HttpServletRequest http) {
    String uri = http.getRequestURI();
    String context = http.getContextPath();
    String inContext = uri.startsWith(context) ? uri.substring(context.length()) : uri;
    if (!inContext.startsWith(mount)) {
      return null;
    }
    String below = inContext.substring(mount.length());
    return below.startsWith("/") ? below : null;
  }
}
