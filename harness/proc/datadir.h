/*
 * datadir.h - where locklab finds the files it ships (scenarios, gnuplot
 * scripts, adapters), in the build tree or installed under a prefix.
 */
#ifndef LOCKLAB_DATADIR_H
#define LOCKLAB_DATADIR_H

/* The directory of the shipped files of kind what ("scenarios", "plots",
 * "adapters"): $LOCKLAB_DATA_DIR/<what> when that variable is set, else
 * <prefix>/share/locklab/<what> beside an installed locklab
 * (<prefix>/bin/locklab) when it exists, else the source tree it was built
 * from. The string stays valid for the life of the program. */
const char *lab_data_dir(const char *what);

#endif
