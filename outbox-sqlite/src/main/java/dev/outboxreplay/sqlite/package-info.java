/**
 * The outbox and inbox on a SQLite file: {@link dev.outboxreplay.sqlite.SqliteDatabase} owns the
 * file (WAL, durability, busy wait, checks at open, space given back),
 * {@link dev.outboxreplay.sqlite.SqliteOutboxStore} and {@link
 * dev.outboxreplay.sqlite.SqliteInboxStore} are the shared JDBC stores on it.
 */
package dev.outboxreplay.sqlite;
