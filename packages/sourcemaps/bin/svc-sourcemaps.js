#!/usr/bin/env node
// The CLI (src/cli.ts, built to dist/cli.js). This file exists before a build, so installing the
// workspace links the bin without a warning.
import '../dist/cli.js';
