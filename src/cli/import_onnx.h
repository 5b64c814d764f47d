/* `frit import FILE.onnx --print`: the ONNX half of the CLI's import command (the command itself
 * dispatches on the file's extension). */
#ifndef FRIT_CLI_IMPORT_ONNX_H
#define FRIT_CLI_IMPORT_ONNX_H

#include <stdio.h>

/* Reads the ONNX model at path and, when print is set, writes its listing (inputs with dtype and
 * shape, weights, nodes, outputs) to out. Errors go to err. Returns the exit status (0 ok,
 * 1 the model could not be read). */
int cli_import_onnx(const char *path, int print, FILE *out, FILE *err);

#endif
