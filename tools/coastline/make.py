#!/usr/bin/env python3
"""Makes src/render/map/coast.json, the simplified coastline the HTML views' maps draw.

Source: Natural Earth's 1:10m land polygons (public domain, naturalearthdata.com), as the
npm package `world-atlas` (version pinned below) carries them in TopoJSON. Run once, then
commit the output; the build never runs this:

    python3 tools/coastline/make.py [OUTPUT]

It installs the package with npm into target/coastline-npm, decodes the TopoJSON land
object, cuts every ring to a box around Scotland (Sutherland-Hodgman against the box's
four edges), simplifies each ring (Douglas-Peucker, in a plane where a degree of longitude
is cos(57 deg) of a degree of latitude), drops islands too small to see at that tolerance,
and writes longitude/latitude pairs rounded to 4 decimals. Only the Python standard
library is used; the output is the same for the same package version.
"""

import json
import math
import os
import subprocess
import sys

PACKAGE = "world-atlas@2.0.2"
SOURCE = "land-10m.json"
# West, south, east, north (degrees): Scotland with the Northern Isles and St Kilda, and
# the neighbouring coasts a map near the border or the North Channel shows.
BOX = (-9.0, 54.0, 0.0, 61.0)
# Degrees of latitude (about 330 m): detail finer than this is dropped.
TOLERANCE = 0.003
# Rings with a smaller area (square degrees of latitude, about 0.9 km2) are dropped.
MIN_AREA = 0.00008
KX = math.cos(math.radians(57.0))

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load():
    prefix = os.path.join(ROOT, "target", "coastline-npm")
    path = os.path.join(prefix, "node_modules", "world-atlas", SOURCE)
    if not os.path.exists(path):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", prefix, PACKAGE], check=True)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def arcs_of(topo):
    """Every arc as absolute (lon, lat) points (TopoJSON quantised, delta-encoded)."""
    (sx, sy), (tx, ty) = topo["transform"]["scale"], topo["transform"]["translate"]
    out = []
    for arc in topo["arcs"]:
        x = y = 0
        points = []
        for dx, dy in arc:
            x += dx
            y += dy
            points.append((x * sx + tx, y * sy + ty))
        out.append(points)
    return out


def ring(arcs, indices):
    points = []
    for i in indices:
        arc = arcs[i] if i >= 0 else list(reversed(arcs[~i]))
        points.extend(arc if not points else arc[1:])
    return points


def polygons(topo):
    arcs = arcs_of(topo)
    geometry = topo["objects"]["land"]
    geometries = geometry["geometries"] if geometry["type"] == "GeometryCollection" else [geometry]
    for g in geometries:
        if g["type"] == "Polygon":
            yield [ring(arcs, r) for r in g["arcs"]]
        elif g["type"] == "MultiPolygon":
            for p in g["arcs"]:
                yield [ring(arcs, r) for r in p]


def clip(points):
    """Sutherland-Hodgman: the ring cut to BOX."""
    west, south, east, north = BOX
    edges = [
        (lambda p: p[0] >= west, lambda a, b: cross_x(a, b, west)),
        (lambda p: p[0] <= east, lambda a, b: cross_x(a, b, east)),
        (lambda p: p[1] >= south, lambda a, b: cross_y(a, b, south)),
        (lambda p: p[1] <= north, lambda a, b: cross_y(a, b, north)),
    ]
    for inside, cross in edges:
        if not points:
            break
        out = []
        prev = points[-1]
        for cur in points:
            if inside(cur):
                if not inside(prev):
                    out.append(cross(prev, cur))
                out.append(cur)
            elif inside(prev):
                out.append(cross(prev, cur))
            prev = cur
        points = out
    return points


def cross_x(a, b, x):
    t = (x - a[0]) / (b[0] - a[0])
    return (x, a[1] + t * (b[1] - a[1]))


def cross_y(a, b, y):
    t = (y - a[1]) / (b[1] - a[1])
    return (a[0] + t * (b[0] - a[0]), y)


def plane(p):
    return (p[0] * KX, p[1])


def simplify(points):
    """Douglas-Peucker on a closed ring (first point kept, iterative)."""
    if len(points) < 4:
        return points
    xy = [plane(p) for p in points]
    keep = [False] * len(points)
    keep[0] = keep[-1] = True
    # Split the ring at its farthest point from the first, so both halves are open lines.
    far = max(range(len(xy)), key=lambda i: (xy[i][0] - xy[0][0]) ** 2 + (xy[i][1] - xy[0][1]) ** 2)
    keep[far] = True
    stack = [(0, far), (far, len(points) - 1)]
    while stack:
        a, b = stack.pop()
        if b <= a + 1:
            continue
        (ax, ay), (bx, by) = xy[a], xy[b]
        dx, dy = bx - ax, by - ay
        norm = math.hypot(dx, dy)
        best, at = -1.0, None
        for i in range(a + 1, b):
            px, py = xy[i]
            d = abs(dy * (px - ax) - dx * (py - ay)) / norm if norm else math.hypot(px - ax, py - ay)
            if d > best:
                best, at = d, i
        if best > TOLERANCE:
            keep[at] = True
            stack.append((a, at))
            stack.append((at, b))
    return [p for p, k in zip(points, keep) if k]


def area(points):
    xy = [plane(p) for p in points]
    return abs(sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(xy, xy[1:] + xy[:1]))) / 2


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "src", "render", "map", "coast.json")
    topo = load()
    rings = []
    for polygon in polygons(topo):
        for r in polygon:
            cut = clip(r)
            if len(cut) < 3:
                continue
            if cut[0] == cut[-1]:
                cut = cut[:-1]
            small = simplify(cut + [cut[0]])[:-1]
            if len(small) >= 3 and area(small) >= MIN_AREA:
                rings.append([[round(x, 4), round(y, 4)] for x, y in small])
    rings.sort(key=lambda r: (-len(r), r[0]))
    doc = {
        "source": f"Natural Earth 1:10m land (public domain), from the npm package {PACKAGE}, {SOURCE}",
        "made_by": "tools/coastline/make.py",
        "box": list(BOX),
        "tolerance_degrees": TOLERANCE,
        "rings": rings,
    }
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"{out_path}: {len(rings)} rings, {sum(map(len, rings))} points", file=sys.stderr)


if __name__ == "__main__":
    main()
