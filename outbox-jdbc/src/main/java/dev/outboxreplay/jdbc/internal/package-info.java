/** Implementation of the JDBC stores; not an API. */
package dev.outboxreplay.jdbc.internal;
