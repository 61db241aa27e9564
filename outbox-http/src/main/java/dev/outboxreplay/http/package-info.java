/**
 * <b>API.</b> The HTTP transport over OkHttp ({@link dev.outboxreplay.http.OkHttpTransport}),
 * the reconciliation client and a connectivity monitor.
 */
package dev.outboxreplay.http;
