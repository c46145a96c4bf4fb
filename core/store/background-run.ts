// One background job of the store running at a time (an index, listing or count build): asked
// again while it runs, it runs once more after it; stopped, it ends after the step under way (the
// job checks `stopped` between steps) and what is left resumes at the next start.
export class BackgroundRun {
  private running: Promise<void> | undefined;
  private again = false;
  private halted = false;

  constructor(
    private readonly job: () => Promise<void>,
    /** A run that threw: logged by the owner, which says what is left until when. */
    private readonly failed: (err: unknown) => void,
  ) {}

  get stopped(): boolean {
    return this.halted;
  }

  kick(): void {
    if (this.halted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.job()
      .catch(this.failed)
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.halted) {
          this.again = false;
          this.kick();
        }
      });
  }

  async stop(): Promise<void> {
    this.halted = true;
    await this.running;
  }

  /** Resolves once nothing is left to run (for tests and tools). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }
}
