"""A program linked against the static runtime archive must not need libcudart or libcuda."""
import subprocess
import sys

out = subprocess.run(["readelf", "-d", sys.argv[1]], check=True, capture_output=True, text=True).stdout
needed = [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]
print("NEEDED:", ", ".join(needed))
bad = [n for n in needed if n.startswith("libcudart") or n.startswith("libcuda.")]
if bad:
    sys.exit("unexpected NEEDED entries: " + ", ".join(bad))
