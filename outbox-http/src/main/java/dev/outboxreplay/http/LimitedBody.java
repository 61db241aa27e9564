package dev.outboxreplay.http;

import java.io.IOException;
import okhttp3.ResponseBody;
import okio.BufferedSource;

/**
 * An answer's body read up to a limit, so that a receiver's endless or huge answer costs at most
 * that much memory: the first {@code limit} bytes, and whether there was more.
 *
 * @param bytes at most the limit's worth of the body
 * @param cut true when the body went on past the limit (the rest was not read)
 */
record LimitedBody(byte[] bytes, boolean cut) {
  static LimitedBody read(ResponseBody body, int limit) throws IOException {
    BufferedSource source = body.source();
    boolean longer = source.request(limit + 1L);
    return longer ? new LimitedBody(source.getBuffer().readByteArray(limit), true)
        : new LimitedBody(source.readByteArray(), false);
  }
}
