// Placeholder until the c-ingest branch lands.
export async function startWriterRole(_o: unknown): Promise<{ problem(): string | null; stop(): Promise<void> }> {
  throw new Error("not built yet");
}
