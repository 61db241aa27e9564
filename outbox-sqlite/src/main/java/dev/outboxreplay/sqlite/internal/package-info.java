/** Implementation of the SQLite stores; not an API. */
package dev.outboxreplay.sqlite.internal;
