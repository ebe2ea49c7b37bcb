#!/usr/bin/env -S node --conditions=@svc/source
// The operator CLI (`svc migrate`, `svc create-project`, ...). Runs the TypeScript sources with
// Node 24's type stripping; the workspace's packages resolve to their sources too.
import { runCli } from '../src/cli.ts';

process.exitCode = await runCli(process.argv.slice(2), process.env);
