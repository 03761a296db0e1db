func.func @custom(%x: memref<8x1000xf32>, %l: memref<8xi32>, %y: memref<8x1000xf16>) {
  %s = memref.alloc() : memref<8xf32>
  rowred.reduce max ins(%x : memref<8x1000xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32):
    rowred.yield %a : f32
  }
  rowred.map ins(%x : memref<8x1000xf32>) rows(%s, %l : memref<8xf32>, memref<8xi32>) outs(%y : memref<8x1000xf16>) {
  ^bb0(%a: f32, %m: f32, %li: i32):
    %j = rowred.column_index : i32
    %hit = arith.cmpi eq, %j, %li : i32
    %d = arith.subf %a, %m : f32
    %z = arith.constant 0.0 : f32
    %v = arith.select %hit, %z, %d : f32
    rowred.yield %v : f32
  } {rowred.plan_request = #rowred.plan_request<strategy = fused, warps = 2>}
  memref.dealloc %s : memref<8xf32>
  return
}
