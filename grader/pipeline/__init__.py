"""The grading pipeline, one module a stage, in the order data flows through them:

    load          read a submission (never run it) and rebuild each kernel's module from its syntax tree
    cases         build the tensors of each case (shapes, dtypes, layouts, NaN-filled outputs, the reference)
    check_cache   what a student's earlier checks learned of an unchanged kernel (compiled, profiled)
    sandbox       start the worker under bubblewrap and resource limits, one puzzle at a time
    worker        in the sandbox: compile each kernel for the GPU, then interpret it on its cases
      compile_check   compile kernels for NVIDIA targets without a GPU
      interpret       launch a kernel in Triton's interpreter, programs in the order the case asks for
      memcheck        check every load, store and atomic against the tensor arguments before it runs
    compare       compare what the kernel left in memory with the reference
    access        which program touched which element (the data behind the notebook's pictures)
    diagnose      explain a puzzle's failures across its cases
    results       verdicts as plain data
    report        render results as a table or JSON

`grade` runs the stages.
"""
