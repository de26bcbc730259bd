/** What a command's `call` and `show` get: its parsed input, and stdout (`log`) and stderr (`note`). */
export interface CommandContext<F, A> {
  flags: F;
  args: A;
  /** The CLI's name (`mailer`), for hints that name another command. */
  bin: string;
  log(line: string): void;
  note(line: string): void;
}
