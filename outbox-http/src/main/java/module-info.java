/** The OkHttp transport: API in {@code dev.outboxreplay.http}. */
module dev.outboxreplay.http {
  requires transitive dev.outboxreplay.core;
  requires transitive okhttp3;
  requires com.fasterxml.jackson.databind;
  requires org.slf4j;

  exports dev.outboxreplay.http;
}
