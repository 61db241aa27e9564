/**
 * The reference receiver: API in {@code dev.outboxreplay.server}; {@code internal} is not
 * exported.
 */
module dev.outboxreplay.server {
  requires transitive dev.outboxreplay.h2;
  requires com.fasterxml.jackson.databind;
  requires org.eclipse.jetty.http;
  requires org.eclipse.jetty.io;
  requires org.eclipse.jetty.server;
  requires org.eclipse.jetty.util;
  requires org.slf4j;
  requires static jakarta.servlet;

  exports dev.outboxreplay.server;
}
