/**
 * The outbox and inbox engines: API and SPI in {@code dev.outboxreplay}. The {@code internal}
 * packages are exported only to this project's own modules. The RFC 8785 library
 * ({@code io.github.erdtman:java-json-canonicalization}) is relocated into this module's jar as
 * {@code dev.outboxreplay.internal.jcs}: it has no module name of its own.
 */
@SuppressWarnings({"module", "requires-automatic"})
module dev.outboxreplay.core {
  requires com.fasterxml.jackson.databind;
  requires io.github.resilience4j.core;
  requires org.slf4j;

  exports dev.outboxreplay;
  exports dev.outboxreplay.receiver;
  exports dev.outboxreplay.internal to
      dev.outboxreplay.jdbc,
      dev.outboxreplay.h2,
      dev.outboxreplay.sqlite,
      dev.outboxreplay.server,
      dev.outboxreplay.http;
}
