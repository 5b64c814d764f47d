/* The one op table of frit: every UOp kind with its source-count bounds and group flags.
 * Include it with X(NAME, MIN_SRC, MAX_SRC, FLAGS) defined; MAX_SRC of -1 means unbounded. */

/* Meta and value ops */
X(CONST,        0, 0,  FRIT_F_META)            /* arg.value: the constant, broadcast over lanes */
X(VECTORIZE,    1, -1, FRIT_F_META)            /* lanes from scalar sources */
X(GEP,          1, 1,  FRIT_F_META)            /* arg.ints: lanes picked out of a vector */
X(CAST,         1, 1,  FRIT_F_META)            /* value conversion to the node dtype */
X(BITCAST,      1, 1,  FRIT_F_META)            /* reinterpretation of the bits */
X(DEFINE_VAR,   0, 0,  FRIT_F_META)            /* symbolic int: arg.blob name, arg.i0..arg.i1 inclusive range */
X(BIND,         2, 2,  FRIT_F_META)            /* a DEFINE_VAR and the value it takes */
X(IOTA,         1, 1,  FRIT_F_META)            /* tensor level: i64 vector 0..src0-1 */
X(CONTIGUOUS,   1, 1,  FRIT_F_META)            /* tensor level: materialise src0 in memory */
X(COLLECTIVE,   1, 1,  FRIT_F_META)            /* tensor level: src0 exchanged across the ranks of the world (src/dist); arg.i0 frit_coll_kind, arg.i1 frit_coll_op, arg.ints {root or dest, source}; one rank: a copy */
X(SINK,         0, -1, FRIT_F_CONTROL)         /* root: the effects and values a program produces */
X(GROUP,        0, -1, FRIT_F_CONTROL)         /* unordered set of effects, treated as one */
X(AFTER,        1, -1, FRIT_F_CONTROL)         /* src0 as it is once effects src1.. have happened */
X(SPECIAL,      1, 1,  FRIT_F_CONTROL)         /* hardware index (thread/block id) below src0, arg.blob name */
/* Movement (tensor level); shapes are sources so that they may be symbolic */
X(RESHAPE,      1, -1, FRIT_F_MOVEMENT)        /* x, then the new dims (i64 nodes) */
X(PERMUTE,      1, 1,  FRIT_F_MOVEMENT)        /* arg.ints: the permutation */
X(EXPAND,       1, -1, FRIT_F_MOVEMENT)        /* x, then the new dims: size-1 dims grow */
X(PAD,          1, -1, FRIT_F_MOVEMENT)        /* x, n dims padded before, n after (zeros) */
X(SHRINK,       1, -1, FRIT_F_MOVEMENT)        /* x, n begins, n ends */
X(FLIP,         1, 1,  FRIT_F_MOVEMENT)        /* arg.ints: flipped axes */
X(GATHER,       2, 2,  FRIT_F_MOVEMENT)        /* x, i64 indices replacing axis arg.i0 (in range) */
/* Reduction */
X(REDUCE_AXIS,  1, 1,  FRIT_F_REDUCTION)       /* tensor level: arg.i0 the ALU op, arg.ints the axes */
X(REDUCE,       1, -1, FRIT_F_REDUCTION)       /* loop level: value, then the RANGEs it reduces over; arg.i0 the ALU op */
X(SCAN,         1, 1,  FRIT_F_REDUCTION)       /* tensor level: inclusive scan, arg.i0 the ALU op, arg.i1 the axis */
/* Control */
X(RANGE,        1, 1,  FRIT_F_CONTROL)         /* loop index in [0, src0); arg.i0 axis id, arg.i1 frit_axis type */
X(END,          1, -1, FRIT_F_CONTROL)         /* src0 runs inside the loops src1..; END itself is outside them */
X(IF,           2, 3,  FRIT_F_CONTROL)         /* cond, then-effect, optional else-effect */
X(BARRIER,      0, -1, FRIT_F_CONTROL | FRIT_F_EFFECT) /* workgroup barrier after the effects it lists */
X(KERNEL,       0, -1, FRIT_F_CONTROL)         /* a kernel: its effects; arg.blob its name, arg.i0 FRIT_KERNEL_TRUSTED or 0, arg.i1 bit s: src s is a trusted kernel's scratch */
/* Memory */
X(BUFFER,       0, -1, FRIT_F_MEMORY)          /* tensor-level input: its dims as sources; arg.i0 input number, arg.blob name */
X(DEFINE_GLOBAL,0, 0,  FRIT_F_MEMORY)          /* kernel parameter: arg.i0 index, arg.i1 elements (-1 unknown) */
X(DEFINE_LOCAL, 0, 0,  FRIT_F_MEMORY)          /* shared/local memory: arg.i0 id, arg.i1 elements */
X(DEFINE_REG,   0, 0,  FRIT_F_MEMORY)          /* registers (accumulators): arg.i0 id, arg.i1 elements */
X(INDEX,        2, 3,  FRIT_F_MEMORY)          /* ptr, element index, optional bool gate */
X(LOAD,         1, -1, FRIT_F_MEMORY)          /* index, optional alt value (non-void), then ordering deps (void) */
X(STORE,        2, -1, FRIT_F_MEMORY | FRIT_F_EFFECT) /* index, value, then ordering deps */
X(ATOMIC,       2, -1, FRIT_F_MEMORY | FRIT_F_EFFECT) /* index, value, deps; arg.i0 the op (frit_atomic_op); yields the old value */
X(ATOMIC_CAS,   3, -1, FRIT_F_MEMORY | FRIT_F_EFFECT) /* index, expected, desired, deps; yields the old value */
/* ALU: unary */
X(NEG,          1, 1,  FRIT_F_UNARY)
X(NOT,          1, 1,  FRIT_F_UNARY)           /* logical not on bool, bitwise not on integers */
X(ABS,          1, 1,  FRIT_F_UNARY)
X(SQRT,         1, 1,  FRIT_F_UNARY)
X(RSQRT,        1, 1,  FRIT_F_UNARY)
X(RECIP,        1, 1,  FRIT_F_UNARY)
X(EXP,          1, 1,  FRIT_F_UNARY)
X(EXP2,         1, 1,  FRIT_F_UNARY)
X(LOG,          1, 1,  FRIT_F_UNARY)
X(LOG2,         1, 1,  FRIT_F_UNARY)
X(SIN,          1, 1,  FRIT_F_UNARY)
X(COS,          1, 1,  FRIT_F_UNARY)
X(TAN,          1, 1,  FRIT_F_UNARY)
X(ASIN,         1, 1,  FRIT_F_UNARY)
X(ACOS,         1, 1,  FRIT_F_UNARY)
X(ATAN,         1, 1,  FRIT_F_UNARY)
X(SINH,         1, 1,  FRIT_F_UNARY)
X(COSH,         1, 1,  FRIT_F_UNARY)
X(TANH,         1, 1,  FRIT_F_UNARY)
X(ERF,          1, 1,  FRIT_F_UNARY)
X(FLOOR,        1, 1,  FRIT_F_UNARY)
X(CEIL,         1, 1,  FRIT_F_UNARY)
X(TRUNC,        1, 1,  FRIT_F_UNARY)
X(RINT,         1, 1,  FRIT_F_UNARY)           /* round half to even */
/* ALU: binary */
X(ADD,          2, 2,  FRIT_F_BINARY | FRIT_F_COMMUTATIVE)
X(SUB,          2, 2,  FRIT_F_BINARY)
X(MUL,          2, 2,  FRIT_F_BINARY | FRIT_F_COMMUTATIVE)
X(FDIV,         2, 2,  FRIT_F_BINARY)          /* float division */
X(IDIV,         2, 2,  FRIT_F_BINARY)          /* integer division, truncating */
X(MOD,          2, 2,  FRIT_F_BINARY)          /* remainder matching IDIV (sign of the dividend); fmod on floats */
X(MAX,          2, 2,  FRIT_F_BINARY | FRIT_F_COMMUTATIVE)
X(MIN,          2, 2,  FRIT_F_BINARY | FRIT_F_COMMUTATIVE)
X(POW,          2, 2,  FRIT_F_BINARY)
X(ATAN2,        2, 2,  FRIT_F_BINARY)
X(AND,          2, 2,  FRIT_F_BINARY | FRIT_F_COMMUTATIVE) /* logical on bool, bitwise on integers */
X(OR,           2, 2,  FRIT_F_BINARY | FRIT_F_COMMUTATIVE)
X(XOR,          2, 2,  FRIT_F_BINARY | FRIT_F_COMMUTATIVE)
X(SHL,          2, 2,  FRIT_F_BINARY)
X(SHR,          2, 2,  FRIT_F_BINARY)          /* arithmetic on signed, logical on unsigned */
X(CMPLT,        2, 2,  FRIT_F_BINARY | FRIT_F_COMPARE)
X(CMPLE,        2, 2,  FRIT_F_BINARY | FRIT_F_COMPARE)
X(CMPEQ,        2, 2,  FRIT_F_BINARY | FRIT_F_COMPARE | FRIT_F_COMMUTATIVE)
X(CMPNE,        2, 2,  FRIT_F_BINARY | FRIT_F_COMPARE | FRIT_F_COMMUTATIVE)
/* ALU: ternary */
X(WHERE,        3, 3,  FRIT_F_TERNARY)         /* cond ? a : b */
X(MULACC,       3, 3,  FRIT_F_TERNARY)         /* a * b + c */
/* Tensor-level functional update (kept last so that the numbers of the ops above do not move) */
X(SCATTER,      3, 3,  FRIT_F_MEMORY)          /* x, i64 indices (1-D) into axis 0, updates; arg.i0 the frit_atomic_op combining them */
/* Shader-like code (appended for the same reason) */
X(SEQ,          0, -1, FRIT_F_CONTROL)         /* explicit kernels: statements run in source order; a value source (LOAD, ATOMIC) is read at that point */
X(BREAK,        1, 1,  FRIT_F_CONTROL | FRIT_F_EFFECT) /* leaves the loop of RANGE src0 */
X(CONTINUE,     1, 1,  FRIT_F_CONTROL | FRIT_F_EFFECT) /* next iteration of the loop of RANGE src0 */
X(LOOP,         5, -1, FRIT_F_CONTROL)         /* tensor level host loop: start, end, step, index var, k carries, k inits, k nexts, stop; arg.i0 k, arg.i1 loop id */
X(CARRY,        0, -1, FRIT_F_MEMORY)          /* tensor level loop-carried placeholder: dims as sources; arg.i0 loop id, arg.i1 slot */
/* Complex parts (appended for the same reason); docs/complex.md */
X(REAL,         1, 1,  FRIT_F_UNARY)           /* complex -> the real part, in the parts' float dtype */
X(IMAG,         1, 1,  FRIT_F_UNARY)           /* complex -> the imaginary part */
X(CONJ,         1, 1,  FRIT_F_UNARY)           /* complex conjugate */
X(COMPLEX,      2, 2,  FRIT_F_BINARY)          /* f32/f64 re, im -> c64/c128 */
