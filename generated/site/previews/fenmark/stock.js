window.rulesdslPreviews("fenmark/stock.html", {});
