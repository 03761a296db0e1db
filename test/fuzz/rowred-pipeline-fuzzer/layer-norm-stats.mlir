func.func @layer_norm(%x: memref<?x4096xbf16>, %w: memref<4096xbf16>, %b: memref<4096xf32>, %y: memref<?x4096xbf16>, %m: memref<?xf32>, %r: memref<?xbf16>) {
  rowred.layer_norm epsilon(1.0e-05) ins(%x : memref<?x4096xbf16>) weight(%w : memref<4096xbf16>) bias(%b : memref<4096xf32>) outs(%y : memref<?x4096xbf16>) mean(%m : memref<?xf32>) rstd(%r : memref<?xbf16>)
  return
}
