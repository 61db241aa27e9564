package dev.outboxreplay.server.internal;

import java.util.function.UnaryOperator;

/**
 * One request as the HTTP server read it.
 *
 * @param path the raw (not percent-decoded) path
 * @param header a header's first value by name, or null
 * @param body the whole body, or null when it was over the limit
 */
public record Incoming(String method, String path, UnaryOperator<String> header, byte[] body) {}
