package dev.outboxreplay.h2;

import java.util.List;

/**
 * One numbered schema step of one component. Statements must be idempotent
 * ({@code IF NOT EXISTS}) because H2 commits each DDL statement on its own: a step interrupted by a
 * crash is simply run again.
 *
 * @param version step number, from 1, without gaps
 * @param description what the step does, recorded in the history table
 * @param statements the SQL to run in order
 */
public record Migration(int version, String description, List<String> statements) {}
