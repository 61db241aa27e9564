/**
 * The outbox and inbox stores over JDBC, shared by every embedded engine: {@link
 * dev.outboxreplay.jdbc.JdbcOutboxStore} and {@link dev.outboxreplay.jdbc.JdbcInboxStore} apply
 * the core's decisions as row operations with compare-and-set; an engine module supplies the open
 * file ({@link dev.outboxreplay.jdbc.JdbcDatabase}) and what its SQL says differently ({@link
 * dev.outboxreplay.jdbc.Dialect}). Layout: {@code docs/table-layout.md}.
 */
package dev.outboxreplay.jdbc;
