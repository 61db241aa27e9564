/** Micrometer meters for the outbox and the inbox: API in {@code dev.outboxreplay.micrometer}. */
// Micrometer declares a stable Automatic-Module-Name
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module dev.outboxreplay.micrometer {
  requires transitive dev.outboxreplay.core;
  requires transitive micrometer.core;

  exports dev.outboxreplay.micrometer;
}
