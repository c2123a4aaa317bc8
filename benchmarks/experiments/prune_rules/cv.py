"""Leave-one-dataset-out: select on 6 dev datasets + TPE orders (the same procedure as select.py), score the
selected rule on the left-out dataset; then the procedure on all 7 dev datasets, scored on s28."""
import json
from analyze import res, DEV
from pick import ranked
for fams in (('matmul', 'attention'), ('matmul', 'attention', 'other')):
    print('== feasibility on', '+'.join(fams))
    for held in DEV + ['s28']:
        dev = [d for d in DEV if d != held]
        sc, name, _ = ranked(fams, dev)[0]
        fam = res[name][held]['fam']
        cells = '  '.join(f"{f[:5]} {fam[f]['saved']*100:4.1f}% lost {fam[f]['lost']*100:4.1f}% worst {fam[f]['worst']:.3f}"
                          for f in ('matmul', 'attention', 'other') if f in fam)
        print(f'  held {held:6} picked [{name}] (dev score {sc*100:.1f}) -> {cells}')
