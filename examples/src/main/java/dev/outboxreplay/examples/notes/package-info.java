/**
 * The sample desktop app: {@link dev.outboxreplay.examples.notes.Notes} (an edit and its command
 * in one transaction), {@link dev.outboxreplay.examples.notes.NotesSync} (the replayer's life
 * cycle), {@link dev.outboxreplay.examples.notes.IncomingEdits} (the inbox), and {@link
 * dev.outboxreplay.examples.notes.NotesApp}, what a window would call, driven headless by
 * {@link dev.outboxreplay.examples.notes.NotesAppMain}. The README's Java blocks are the first
 * three files, whole.
 */
package dev.outboxreplay.examples.notes;
