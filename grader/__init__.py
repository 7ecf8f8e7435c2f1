"""Grader of the Triton puzzle course: runs student kernels in Triton's interpreter, on the CPU, sandboxed.

The pipeline, one module a stage:
    course        read and validate course.yml
    load          read a submission (never run it) and build each kernel's module
    cases         build the tensors of each case (shapes, dtypes, layouts, NaN-filled outputs, the reference)
    sandbox       start the worker under bubblewrap and resource limits, one puzzle at a time
    worker        in the sandbox: compile each kernel for the GPU, then interpret it on its cases
    compile_check compile kernels for NVIDIA targets without a GPU
    interpret     launch a kernel in Triton's interpreter, programs in the order the case asks for
    memcheck      check every load, store and atomic against the tensor arguments before it runs
    compare       compare what the kernel left in memory with the reference
    diagnose      explain a puzzle's failures across its cases
    report        render results as a table or JSON
grade.py runs the stages; cli.py is the `triton-course` command; notebook.py is what puzzle notebooks call;
nbgrader.py and classroom.py grade a class.
"""
