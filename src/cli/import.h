/* frit import: read a StableHLO (.mlir) or ONNX (.onnx) model and print it. */
#ifndef FRIT_CLI_IMPORT_H
#define FRIT_CLI_IMPORT_H

int cli_import(int argc, char **argv);

#endif
