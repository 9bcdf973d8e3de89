// The node side of the torch reference server (referenceProtocol.ts): one python process per
// suite, one request at a time, replies matched by order.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import {
  REPLY_MARKER,
  type CheckReply,
  type CheckRequest,
  type HelloReply,
  type PrepareReply,
  type PrepareRequest,
  type ReferenceRequest,
} from './referenceProtocol.ts';

/** A request the server answered with ok: false, or a server that died. */
export class ReferenceServerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReferenceServerError';
  }
}

export interface ReferenceClientOptions {
  readonly script: string;
  readonly python?: string | undefined;
  /** Where the server's non-reply stdout lines go (stderr is inherited). */
  readonly log?: (line: string) => void;
}

/** A running reference server. */
export class ReferenceClient {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #waiting: Array<{ resolve: (reply: unknown) => void; reject: (error: Error) => void }> = [];
  #exited: string | undefined;

  private constructor(child: ChildProcessWithoutNullStreams, log: (line: string) => void) {
    this.#child = child;
    child.stderr.pipe(process.stderr);
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith(REPLY_MARKER)) return log(line);
      this.#waiting.shift()?.resolve(JSON.parse(line.slice(REPLY_MARKER.length)));
    });
    child.on('exit', (code, signal) => {
      this.#exited = `reference server exited (${code ?? signal})`;
      for (const w of this.#waiting.splice(0)) w.reject(new ReferenceServerError(this.#exited));
    });
  }

  /** Starts `python script --serve`. */
  static start(options: ReferenceClientOptions): ReferenceClient {
    const child = spawn(options.python ?? 'python3', [options.script, '--serve'], {
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new ReferenceClient(child, options.log ?? ((line) => console.log(line)));
  }

  hello(): Promise<HelloReply> {
    return this.#request({ cmd: 'hello' });
  }

  prepare(request: Omit<PrepareRequest, 'cmd'>): Promise<PrepareReply> {
    return this.#request({ cmd: 'prepare', ...request });
  }

  check(request: Omit<CheckRequest, 'cmd'>): Promise<CheckReply> {
    return this.#request({ cmd: 'check', ...request });
  }

  /** Closes the server's stdin and waits for it to exit. */
  close(): Promise<void> {
    if (this.#exited !== undefined) return Promise.resolve();
    return new Promise((resolve) => {
      this.#child.once('exit', () => resolve());
      this.#child.stdin.end();
    });
  }

  #request<T>(request: ReferenceRequest): Promise<T> {
    if (this.#exited !== undefined) return Promise.reject(new ReferenceServerError(this.#exited));
    return new Promise<unknown>((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
      this.#child.stdin.write(`${JSON.stringify(request)}\n`);
    }).then((reply) => {
      const r = reply as { ok?: unknown; error?: unknown };
      if (r.ok !== true) throw new ReferenceServerError(`${request.cmd}: ${typeof r.error === 'string' ? r.error : 'malformed reply'}`);
      return reply as T;
    });
  }
}
