"builtin.module"() <{sym_name = "jit_gs"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<5x3xf32>, tensor<3xi32>, tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg9: tensor<5x3xf32>, %arg10: tensor<3xi32>, %arg11: tensor<3x3xf32>):
    %40 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %41 = "stablehlo.broadcast_in_dim"(%40) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3xi32>
    %42 = "stablehlo.compare"(%arg10, %41) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %43 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %44 = "stablehlo.broadcast_in_dim"(%43) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3xi32>
    %45 = "stablehlo.add"(%arg10, %44) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %46 = "stablehlo.select"(%42, %45, %arg10) : (tensor<3xi1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %47 = "stablehlo.broadcast_in_dim"(%46) <{broadcast_dimensions = array<i64: 0>}> : (tensor<3xi32>) -> tensor<3x1xi32>
    %48 = "stablehlo.gather"(%arg9, %47) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 3>}> : (tensor<5x3xf32>, tensor<3x1xi32>) -> tensor<3x3xf32>
    %49 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %50 = "stablehlo.broadcast_in_dim"(%49) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3xi32>
    %51 = "stablehlo.compare"(%arg10, %50) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %52 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %53 = "stablehlo.broadcast_in_dim"(%52) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3xi32>
    %54 = "stablehlo.add"(%arg10, %53) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %55 = "stablehlo.select"(%51, %54, %arg10) : (tensor<3xi1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %56 = "stablehlo.broadcast_in_dim"(%55) <{broadcast_dimensions = array<i64: 0>}> : (tensor<3xi32>) -> tensor<3x1xi32>
    %57 = "stablehlo.scatter"(%arg9, %56, %arg11) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg12: tensor<f32>, %arg13: tensor<f32>):
      %60 = "stablehlo.add"(%arg12, %arg13) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%60) : (tensor<f32>) -> ()
    }) : (tensor<5x3xf32>, tensor<3x1xi32>, tensor<3x3xf32>) -> tensor<5x3xf32>
    %58 = "func.call"(%arg9) <{callee = @argsort}> : (tensor<5x3xf32>) -> tensor<5x3xi32>
    %59 = "func.call"(%arg9, %58) <{callee = @take_along_axis}> : (tensor<5x3xf32>, tensor<5x3xi32>) -> tensor<5x3xf32>
    "func.return"(%48, %57, %59) : (tensor<3x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<5x3xf32>) -> tensor<5x3xi32>, res_attrs = [{}], sym_name = "argsort", sym_visibility = "private"}> ({
  ^bb0(%arg4: tensor<5x3xf32>):
    %23 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<5x3xi32>
    %24:2 = "stablehlo.sort"(%arg4, %23) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>, %arg7: tensor<i32>, %arg8: tensor<i32>):
      %25 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %26 = "stablehlo.compare"(%arg5, %25) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %27 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %28 = "stablehlo.select"(%26, %27, %arg5) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %29 = "stablehlo.compare"(%arg5, %arg5) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %30 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %31 = "stablehlo.select"(%29, %30, %28) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %32 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %33 = "stablehlo.compare"(%arg6, %32) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %34 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %35 = "stablehlo.select"(%33, %34, %arg6) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %36 = "stablehlo.compare"(%arg6, %arg6) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %37 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %38 = "stablehlo.select"(%36, %37, %35) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %39 = "stablehlo.compare"(%31, %38) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%39) : (tensor<i1>) -> ()
    }) : (tensor<5x3xf32>, tensor<5x3xi32>) -> (tensor<5x3xf32>, tensor<5x3xi32>)
    "func.return"(%24#1) : (tensor<5x3xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<5x3xf32>, tensor<5x3xi32>) -> tensor<5x3xf32>, res_attrs = [{}], sym_name = "take_along_axis", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<5x3xf32>, %arg1: tensor<5x3xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<5x3xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<5x3xi32>, tensor<5x3xi32>) -> tensor<5x3xi1>
    %3 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<5x3xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<5x3xi32>, tensor<5x3xi32>) -> tensor<5x3xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<5x3xi1>, tensor<5x3xi32>, tensor<5x3xi32>) -> tensor<5x3xi32>
    %7 = "stablehlo.reshape"(%6) : (tensor<5x3xi32>) -> tensor<5x3x1xi32>
    %8 = "stablehlo.constant"() <{value = dense<2> : tensor<1xi32>}> : () -> tensor<1xi32>
    %9 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<5x3x1xi32>
    %11 = "stablehlo.compare"(%7, %10) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<5x3x1xi32>, tensor<5x3x1xi32>) -> tensor<5x3x1xi1>
    %12 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 2>}> : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x1xi32>) -> tensor<5x3x1xi32>
    %14 = "stablehlo.compare"(%7, %13) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<5x3x1xi32>, tensor<5x3x1xi32>) -> tensor<5x3x1xi1>
    %15 = "stablehlo.and"(%11, %14) : (tensor<5x3x1xi1>, tensor<5x3x1xi1>) -> tensor<5x3x1xi1>
    %16 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %17 = "stablehlo.reduce"(%15, %16) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg2: tensor<i1>, %arg3: tensor<i1>):
      %22 = "stablehlo.and"(%arg2, %arg3) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%22) : (tensor<i1>) -> ()
    }) : (tensor<5x3x1xi1>, tensor<i1>) -> tensor<5x3xi1>
    %18 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<5x3xf32>, tensor<5x3x1xi32>) -> tensor<5x3xf32>
    %19 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<5x3xf32>
    %21 = "stablehlo.select"(%17, %18, %20) : (tensor<5x3xi1>, tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
    "func.return"(%21) : (tensor<5x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
