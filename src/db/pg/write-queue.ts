/**
 * Writes that Core's synchronous paths hand to PostgreSQL: run one at a time in the order
 * given (a status set after a registration lands after it), each failure reported and the
 * next write tried. `settled()` resolves once everything queued so far is done: a reader
 * that must see its own instance's writes awaits it first.
 */
export class WriteQueue {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly onError: (e: Error, what: string) => void) {}

  push(what: string, write: () => Promise<unknown>): void {
    this.tail = this.tail.then(() => write().then(
      () => {},
      (e: Error) => this.onError(e, what),
    ));
  }

  settled(): Promise<void> {
    return this.tail;
  }
}
