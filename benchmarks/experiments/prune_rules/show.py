import json, sys
res = json.load(open('/tmp/kt/prune/sweep.json'))
DS = ['s8', 's9', 's15', 's18', 's27', 's14', 'stored', 's28']
def show(name):
    r = res[name]
    print(f'## {name}')
    for f in ('matmul', 'attention', 'other'):
        cells = []
        for d in DS:
            x = r[d]['fam'].get(f)
            cells.append(f"{d}:{x['saved']*100:4.1f}/{x['lost']*100:4.1f}/{x['worst']:.3f}" if x else f'{d}:   -   ')
        print(f'  {f[:5]:5} ' + ' '.join(cells))
for n in sys.argv[1:]:
    show(n)
