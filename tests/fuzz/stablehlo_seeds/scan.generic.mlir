"builtin.module"() <{sym_name = "jit_loop"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<5x3xf32>) -> (tensor<3xf32>, tensor<5xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg9: tensor<5x3xf32>):
    %12 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %14 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<5xf32>
    %16 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %17:4 = "stablehlo.while"(%arg9, %16, %13, %15) ({
    ^bb0(%arg14: tensor<5x3xf32>, %arg15: tensor<i32>, %arg16: tensor<3xf32>, %arg17: tensor<5xf32>):
      %23 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %24 = "stablehlo.compare"(%arg15, %23) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%24) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg10: tensor<5x3xf32>, %arg11: tensor<i32>, %arg12: tensor<3xf32>, %arg13: tensor<5xf32>):
      %18 = "func.call"(%arg10, %arg11) <{callee = @dynamic_index_in_dim}> : (tensor<5x3xf32>, tensor<i32>) -> tensor<3xf32>
      %19:2 = "func.call"(%arg12, %18) <{callee = @closed_call}> : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>)
      %20 = "func.call"(%arg13, %19#1, %arg11) <{callee = @dynamic_update_index_in_dim}> : (tensor<5xf32>, tensor<f32>, tensor<i32>) -> tensor<5xf32>
      %21 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %22 = "stablehlo.add"(%arg11, %21) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg10, %22, %19#0, %20) : (tensor<5x3xf32>, tensor<i32>, tensor<3xf32>, tensor<5xf32>) -> ()
    }) : (tensor<5x3xf32>, tensor<i32>, tensor<3xf32>, tensor<5xf32>) -> (tensor<5x3xf32>, tensor<i32>, tensor<3xf32>, tensor<5xf32>)
    "func.return"(%17#2, %17#3) : (tensor<3xf32>, tensor<5xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<5x3xf32>, tensor<i32>) -> tensor<3xf32>, res_attrs = [{}], sym_name = "dynamic_index_in_dim", sym_visibility = "private"}> ({
  ^bb0(%arg7: tensor<5x3xf32>, %arg8: tensor<i32>):
    %9 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %10 = "stablehlo.dynamic_slice"(%arg7, %arg8, %9) <{slice_sizes = array<i64: 1, 3>}> : (tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %11 = "stablehlo.reshape"(%10) : (tensor<1x3xf32>) -> tensor<3xf32>
    "func.return"(%11) : (tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>), res_attrs = [{}, {}], sym_name = "closed_call", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<3xf32>, %arg4: tensor<3xf32>):
    %2 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %4 = "stablehlo.multiply"(%arg3, %3) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %5 = "stablehlo.add"(%4, %arg4) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.reduce"(%5, %6) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %8 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%8) : (tensor<f32>) -> ()
    }) : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
    "func.return"(%5, %7) : (tensor<3xf32>, tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<5xf32>, tensor<f32>, tensor<i32>) -> tensor<5xf32>, res_attrs = [{}], sym_name = "dynamic_update_index_in_dim", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<5xf32>, %arg1: tensor<f32>, %arg2: tensor<i32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1xf32>
    %1 = "stablehlo.dynamic_update_slice"(%arg0, %0, %arg2) : (tensor<5xf32>, tensor<1xf32>, tensor<i32>) -> tensor<5xf32>
    "func.return"(%1) : (tensor<5xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
