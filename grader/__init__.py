"""Grader of the Triton puzzle course: interprets student kernels on the CPU against PyTorch references.

The pipeline, one module a stage:
    course    read and validate course.yml
    load      find each puzzle's kernel in a .py file, a notebook or a directory of them
    cases     build the tensors of each case (shapes, dtypes, layouts, NaN-filled outputs)
    interpret launch the kernel in Triton's interpreter, programs in the order the case asks
    memcheck  check every load, store and atomic against the tensor arguments before it runs
    compare   compare what the kernel wrote with the reference
    diagnose  explain a puzzle's failures across its cases
    compile   compile passing kernels for real NVIDIA targets, without a GPU
    report    render results as a table or JSON
grade.py runs the stages in order; cli.py is the `triton-course` command.
"""
