def log = new File(basedir, 'build.log').text
assert log.contains('FRESH PROJECT OK') : 'the program did not finish'
true
