import { closeSync, fsyncSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

// One thread of the durable file writer (durable-file-writer.ts). Each job creates a new file,
// writes it, fsyncs it and then its directory, with blocking calls: one message each way instead
// of an event-loop round trip per file system call. Only Node built-ins here, and only erasable
// TypeScript, so Node runs this file as it is.

/** A file to create: `file` must not exist yet (`wx`). */
export interface WriteJob {
  id: number;
  file: string;
  directory: string;
  bytes: Uint8Array;
  mode: number;
  /** fsync `directory` after the file (false where directories cannot be fsynced: Windows). */
  syncDirectory: boolean;
}

/** Which step failed: `open` left nothing behind; after it the file was removed again. */
export type WriteStage = 'open' | 'write' | 'directory';

export type WriteResult =
  | { id: number; error?: undefined }
  | { id: number; error: { stage: WriteStage; code: string | undefined; message: string } };

function failed(job: WriteJob, stage: WriteStage, error: unknown): WriteResult {
  const code =
    typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
      ? error.code
      : undefined;
  return {
    id: job.id,
    error: { stage, code, message: error instanceof Error ? error.message : String(error) },
  };
}

function quietly(action: () => void): void {
  try {
    action();
  } catch {
    // Cleanup after a failure that is already being reported.
  }
}

function write(job: WriteJob): WriteResult {
  let descriptor: number;
  try {
    descriptor = openSync(job.file, 'wx', job.mode);
  } catch (error) {
    return failed(job, 'open', error);
  }
  try {
    for (let offset = 0; offset < job.bytes.byteLength; ) {
      offset += writeSync(descriptor, job.bytes, offset);
    }
    fsyncSync(descriptor);
  } catch (error) {
    quietly(() => closeSync(descriptor));
    quietly(() => unlinkSync(job.file));
    return failed(job, 'write', error);
  }
  try {
    closeSync(descriptor);
  } catch (error) {
    quietly(() => unlinkSync(job.file));
    return failed(job, 'write', error);
  }
  if (job.syncDirectory) {
    let directory: number | undefined;
    try {
      directory = openSync(job.directory, 'r');
      fsyncSync(directory);
    } catch (error) {
      quietly(() => unlinkSync(job.file));
      return failed(job, 'directory', error);
    } finally {
      const opened = directory;
      if (opened !== undefined) quietly(() => closeSync(opened));
    }
  }
  return { id: job.id };
}

parentPort?.on('message', (job: WriteJob) => {
  parentPort?.postMessage(write(job));
});
