// `laneway …` from the sources (for tests that run the command as users do, without dist/):
// node --import tsx test/docs/run-cli.ts serve DIR …
import { main } from '../../src/cli/index.js';

main(process.argv.slice(2)).then((code) => process.exit(code));
