package dev.outboxreplay.jdbc;

import java.util.List;

/**
 * One numbered schema step of one component. Statements must be idempotent ({@code IF NOT
 * EXISTS}): an engine that commits each DDL statement on its own (H2) runs a step interrupted by a
 * crash again.
 *
 * @param version step number, from 1, without gaps
 * @param description what the step does, recorded in the history table
 * @param statements the SQL to run in order
 */
public record Migration(int version, String description, List<String> statements) {}
