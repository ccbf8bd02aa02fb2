"""Stand-in for the python3.12 managed runtime's /var/runtime/bootstrap.py.

sys.path as Lambda documents it for python3.12: the task root, then the layer paths, then the
runtime's own packages (here the /var/lang venv: awslambdaric, boto3). Then awslambdaric's loop.
"""
import os
import sys

task_root = os.environ.get("LAMBDA_TASK_ROOT", "/var/task")
runtime_dir = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if p != runtime_dir]
sys.path[0:0] = [task_root, "/opt/python/lib/python3.12/site-packages", "/opt/python"]
sys.path.append(runtime_dir)

from awslambdaric.__main__ import main  # noqa: E402

main([sys.argv[0], os.environ["_HANDLER"]])
