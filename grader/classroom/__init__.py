"""What an instructor uses to grade a class: `batch` grades a folder of submissions into a CSV, `nbgrader`
plugs the grader into nbgrader's autograding."""
